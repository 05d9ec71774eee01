/**
 * Another client holds the tasks table locked for 10 s: a request of `serve` on that PostgreSQL
 * store waits for the lock no longer than the store's lock timeout (2 s by default), then is
 * answered with the retryable store-busy error, instead of hanging for as long as the lock is held.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OWN_ERROR_CODES } from "../../src/mcp/own-error-codes.js";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask, rpcError, taskResult, wireMessage } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";
import { statelessRpc } from "../support/stateless-client.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { LOCK_CLASS } from "../../src/store/postgres/schema.js";

const schemas = freshSchemas("lockwait");
const schema = schemas.next();
let url: string;
let client: HttpClient;

beforeAll(async () => {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `${TEST_PG_URL}?schema=${schema}`, "--port", "0", "--no-web"]);
  url = await server.url();
  client = await connectHttpClient(url);
}, 30_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await killAll();
  await schemas.dropAll();
});

const ERAS = [
  {
    name: "2025-11-25" as const,
    async getTask(taskId: string) {
      const error = await rpcError(getTask(client.client, taskId));
      return { code: error.code, message: wireMessage(error), data: error.data };
    },
  },
  {
    name: "2026-07-28" as const,
    async getTask(taskId: string) {
      const { body } = await statelessRpc(url, "tasks/get", { taskId });
      return body.error;
    },
  },
];

describe("PostgreSQL: a lock held by another client", { timeout: 30_000 }, () => {
  it("a request waits for a lock on the tasks table at most the lock timeout, then is answered with the retryable store-busy error, in both eras", async () => {
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 10 });
    await taskResult(client.client, task.taskId);
    const holder = new pg.Client({ connectionString: TEST_PG_URL });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}".tasks IN ACCESS EXCLUSIVE MODE`);
      const released = setTimeout(() => void holder.query("ROLLBACK").catch(() => {}), 10_000);
      try {
        const answers = await Promise.all(
          ERAS.map(async (era) => {
            const sent = performance.now();
            const error = await era.getTask(task.taskId);
            return { era: era.name, error, ms: performance.now() - sent };
          }),
        );
        for (const { era, error, ms } of answers) {
          expect(error, era).toMatchObject({
            code: OWN_ERROR_CODES.unavailable.codes[era],
            data: { reason: "store_busy", retryAfterMs: 1000 },
          });
          expect(error?.message, era).toBe("The task store is busy: nothing was written; retry shortly");
          // One wait of 2 s for the read; on 2025-11-25 another for storing the answer's SSE event
          // for resumption, which is sent anyway when the store refuses it.
          expect(ms, era).toBeLessThan(7_000);
        }
      } finally {
        clearTimeout(released);
      }
    } finally {
      await holder.end();
    }
  });

  it("the wait is postgresStore's lockTimeoutMs, and a lock_timeout parameter of the store's URL wins over it", async () => {
    const holder = new pg.Client({ connectionString: TEST_PG_URL });
    await holder.connect();
    const quick = postgresStore(TEST_PG_URL, { schema, lockTimeoutMs: 300 });
    const url = new URL(TEST_PG_URL);
    url.searchParams.set("lock_timeout", "300");
    const byUrl = postgresStore(url.toString(), { schema, lockTimeoutMs: 20_000 });
    try {
      await Promise.all([quick.migrate(), byUrl.migrate()]);
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}".tasks IN ACCESS EXCLUSIVE MODE`);
      for (const store of [quick, byUrl]) {
        const sent = performance.now();
        await expect(store.get("any", { any: true })).rejects.toMatchObject({ code: "55P03" });
        expect(performance.now() - sent).toBeLessThan(5_000);
      }
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await Promise.all([holder.end(), quick.close(), byUrl.close()]);
    }
  });

  it("a migration waits for another node's migration for as long as it takes, past the lock timeout", async () => {
    const fresh = schemas.next();
    const holder = new pg.Client({ connectionString: TEST_PG_URL });
    await holder.connect();
    const store = postgresStore(TEST_PG_URL, { schema: fresh, lockTimeoutMs: 200, statementTimeoutMs: 400 });
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [LOCK_CLASS, fresh]);
      const migrated = store.migrate();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await holder.query("ROLLBACK");
      await migrated;
      expect(await store.get("any", { any: true })).toBeNull();
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await Promise.all([holder.end(), store.close()]);
    }
  });
});
