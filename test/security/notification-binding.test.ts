/**
 * Attack suite, notifications (T-SEC-3, T-NOTE-1, T-PROG-1): while alice's task reports progress
 * and changes status, mallory keeps her GET stream open and keeps asking for alice's task with
 * tasks/result and tasks/get. Nothing mallory receives — on her GET stream or on the streams of
 * her own requests — may carry a notifications/progress or notifications/tasks/status of alice's
 * task. Run with local and shared sessions, on a SQLite file and on PostgreSQL (where every store
 * read is real I/O, so events do arrive while a refused lookup is still in flight).
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { outcomeOf } from "../support/victim-tasks.js";

let env: TwoPrincipals | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const schemas = freshSchemas("mcp_tasks_notes");
afterAll(() => schemas.dropAll());

const stores: Record<string, () => Partial<TaskServerOptions>> = {
  "a SQLite file": () => ({}),
  PostgreSQL: () => ({ store: postgresStore(TEST_PG_URL, { schema: schemas.next(), poolSize: 4 }) }),
};

const cases = Object.keys(stores).flatMap((store) => (["local", "shared"] as const).map((sessions) => [store, sessions] as const));

describe.each(cases)("notifications of alice's task on %s with %s sessions (T-SEC-3)", (store, sessions) => {
  it("never reach mallory, on her GET stream or on her own requests' streams, though she asks for the task all along", async () => {
    env = await startTwoPrincipals({ app: stores[store]?.(), http: { sessions } });
    const { alice, mallory } = env;
    let progressSeen = 0;
    const created = await callToolAsTask(alice.client, "sleep", { ms: 600, steps: 60 }, {}, { onprogress: () => progressSeen++ });
    const taskId = created.task.taskId;
    const done = taskResult(alice.client, taskId);
    let finished = false;
    void done.finally(() => (finished = true)).catch(() => {});

    let attempts = 0;
    while (!finished) {
      attempts++;
      await outcomeOf(taskResult(mallory.client, taskId));
      await outcomeOf(getTask(mallory.client, taskId));
    }
    expect((await done).content).toEqual([{ type: "text", text: "slept 600 ms" }]);
    expect(attempts).toBeGreaterThan(5);
    // Alice did get her notifications: there was something to leak.
    expect(progressSeen).toBeGreaterThan(0);

    const leaked = mallory.received.items.filter((r) => r.message.method !== undefined || JSON.stringify(r.message).includes(taskId));
    expect(leaked.map((r) => r.message)).toEqual([]);
  });
});
