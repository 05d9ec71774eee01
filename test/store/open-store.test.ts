import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isLeaseStore } from "../../src/store/lease-store.js";
import { openStore } from "../../src/store/open-store.js";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";
import { newTask } from "../../src/testing/store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-open-"));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (schemas.length > 0) await pgQuery(`DROP SCHEMA IF EXISTS ${schemas.map((s) => `"${s}"`).join(", ")} CASCADE`);
});

/** TEST_PG_URL with extra query parameters, and with the given scheme. */
function pgSpec(params: Record<string, string>, scheme = "postgres:"): string {
  const url = new URL(TEST_PG_URL);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return `${scheme}${url.toString().slice(url.protocol.length)}`;
}

describe("openStore", () => {
  it("`memory` opens an in-process store", async () => {
    const store = openStore("memory");
    const task = await store.create(newTask());
    expect((await store.get(task.id, { any: true }))?.status).toBe("working");
    await store.close();
  });

  it("`sqlite:PATH` and a plain `*.db` path open the same SQLite file", async () => {
    const path = join(dir, "tasks.db");
    const viaScheme = openStore(`sqlite:${path}`);
    const task = await viaScheme.create(newTask());
    await viaScheme.close();
    const viaPath = openStore(path);
    expect((await viaPath.get(task.id, { any: true }))?.id).toBe(task.id);
    await viaPath.close();
  });

  it("`sqlite::memory:` opens a private in-memory SQLite database", async () => {
    const store = openStore("sqlite::memory:");
    await store.create(newTask());
    expect(await store.countActive("alice")).toBe(1);
    await store.close();
  });

  it.each(["postgres:", "postgresql:"])("`%s//…?schema=NAME` opens a PostgreSQL cluster store in that schema", async (scheme) => {
    const schema = uniqueName("mcp_tasks_open");
    schemas.push(schema);
    const appName = uniqueName("mcp_tasks_open_app");
    const store = openStore(pgSpec({ schema, application_name: appName }, scheme));
    expect(isLeaseStore(store)).toBe(true);
    expect((store as PostgresStore).schema).toBe(schema);
    const task = await store.create(newTask());
    // The driver got the other parameters.
    const apps = await pgQuery("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [appName]);
    expect(apps.rows[0]).toEqual({ n: 1 });
    await store.close();
    const direct = postgresStore(TEST_PG_URL, { schema });
    expect((await direct.get(task.id, { any: true }))?.id).toBe(task.id);
    await direct.close();
  });

  it("a PostgreSQL URL without schema uses mcp_tasks, and connects to nothing until used", async () => {
    const store = openStore("postgres://nobody@127.0.0.1:1/none");
    expect((store as PostgresStore).schema).toBe("mcp_tasks");
    await store.close();
  });

  it.each(["postgres://h/db?schema=Bad-Name", "postgres://h/db?schema=", "postgresql://h/db?schema=a&schema=b", "postgres://h:port/db"])(
    "rejects %j at once",
    (spec) => {
      expect(() => openStore(spec)).toThrow(/schema|Invalid store/);
    },
  );

  it.each(["", "sqlite:", "redis://localhost/tasks", "mysql://host/x.db", "tasks.json", "Memory", "postgres:/one-slash"])(
    "rejects %j with an error naming the accepted forms",
    (spec) => {
      expect(() => openStore(spec)).toThrow(/store/i);
    },
  );
});
