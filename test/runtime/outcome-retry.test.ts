/**
 * A worker's outcome write across a store it cannot reach, on the real PostgreSQL: retried for as
 * long as the worker holds the task's lease (the pool keeps renewing it meanwhile), stored once
 * the store answers; and when the lease is lost first, given up with the log line that says so.
 * The store is "unreachable" by sending the outcome write to a server that is not there: the
 * error is the one node-postgres really throws.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/logger.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { deferred } from "../support/conformance.js";
import { freePort } from "../support/free-port.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("outcome");
const closing: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const c of closing) await c.close().catch(() => {});
  await schemas.dropAll();
});

interface Line {
  level: string;
  msg: string | undefined;
  obj: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): Logger {
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, msg, obj: obj as Record<string, unknown> });
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ORIGIN = { sessionId: null, progressToken: null, accepts: [] };

/** A worker engine whose outcome writes go to an unreachable server while `cutOff()` says so. */
async function worker(store: PostgresStore, cutOff: () => boolean, lines: Line[]) {
  const down = postgresStore(`postgres://postgres@127.0.0.1:${await freePort()}/test`, { schema: store.schema });
  closing.push(down);
  const finished = deferred();
  const engine = new TaskEngine({
    store: {
      ...store,
      transition: (...args: Parameters<PostgresStore["transition"]>) =>
        (cutOff() && args[2] === "completed" ? down : store).transition(...args),
    },
    bus: localEventBus(),
    logger: recordingLogger(lines),
    runner: async () => {
      finished.resolve();
      return { value: { content: [{ type: "text", text: "done" }] } };
    },
    cluster: { workerId: "w1", concurrency: 1, leaseMs: 600, recheckMs: 50, intervalMs: 60_000 },
  });
  closing.push(engine);
  await engine.start();
  const task = await engine.create({ owner: null, method: "tools/call", name: "t", request: {}, origin: ORIGIN, ttl: 600_000 });
  return { engine, task, finished };
}

describe("a worker's outcome write", () => {
  it("is retried while the store is unreachable, the lease kept meanwhile, and stored once it answers", async () => {
    const store = postgresStore(TEST_PG_URL, { schema: schemas.next() });
    closing.push(store);
    const lines: Line[] = [];
    let unreachable = true;
    const { task, finished } = await worker(store, () => unreachable, lines);
    await finished.promise;
    await until(() => lines.filter((l) => l.msg === "task store write failed; retrying").length >= 2, "two retries");
    // Longer than the lease (600 ms): renewals keep it, so nobody may take the task.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await store.get(task.id, { any: true }))?.status).toBe("working");
    expect(await store.expiredLeases(Date.now(), 10)).toEqual([]);
    unreachable = false;
    await until(async () => (await store.get(task.id, { any: true }))?.status === "completed", "the outcome stored", 15_000);
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
  });

  it("stops when the lease is lost first, saying the outcome could not be stored before the lease ran out", async () => {
    const store = postgresStore(TEST_PG_URL, { schema: schemas.next() });
    closing.push(store);
    const lines: Line[] = [];
    const { task, finished } = await worker(store, () => true, lines);
    await finished.promise;
    await until(() => lines.some((l) => l.msg === "task store write failed; retrying"), "a retry");
    // Another node's reaper takes the task once the lease has run out (here: at once, with a later now).
    expect(await store.requeue(task.id, "w1", 3, Date.now() + 60_000)).toBe(true);
    await until(
      () => lines.some((l) => l.msg === "the outcome could not be stored before the lease ran out"),
      "the worker to give up",
      15_000,
    );
    const line = lines.find((l) => l.msg === "the outcome could not be stored before the lease ran out");
    expect(line).toMatchObject({ level: "error", obj: { taskId: task.id, workerId: "w1", attempt: 1, dropped: "completed" } });
    expect((await store.get(task.id, { any: true }))?.status).toBe("working");
  });
});
