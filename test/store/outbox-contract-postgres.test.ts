import { afterAll } from "vitest";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { outboxContract } from "../../src/testing/outbox-contract.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("mcp_tasks_outbox");

afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

outboxContract("postgresStore", async () => {
  const store = postgresStore(TEST_PG_URL, { schema, poolSize: 4 });
  await store.migrate();
  await pgQuery(`DELETE FROM "${schema}".tasks; DELETE FROM "${schema}".webhook_outbox; DELETE FROM "${schema}".webhook_disabled`);
  return store;
});
