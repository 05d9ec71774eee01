/**
 * The PostgreSQL store under the load of a busy worker: leases renewed over and over (a short
 * lease) while the same tasks' status changes and outcomes go out in batches in every order, and a
 * front marks finished results fetched in batches. Every statement that writes several tasks takes
 * their locks in one order, so none of them deadlocks with another (40P01), and nothing written is
 * lost. deadlock_timeout is cut to 50 ms so that a deadlock, if any, is found within the run.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { TaskStatus } from "../../src/core/task-status.js";
import type { TaskOutcome } from "../../src/core/task.js";
import type { Claim } from "../../src/store/claim.js";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { newTask } from "../../src/testing/store-contract.js";
import { freshSchemas, pgQuery, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("lockorder");
const stores: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await schemas.dropAll();
});

const URL_QUICK_DEADLOCKS = (() => {
  const url = new URL(TEST_PG_URL);
  url.searchParams.set("options", "-c deadlock_timeout=50 -c synchronous_commit=off");
  return url.toString();
})();

const TASKS = 120;
const RUN_MS = 8_000;
const LEASE_MS = 1_500;
const WORKER = "worker-1";

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const done = (id: string): TaskOutcome => ({ kind: "result", value: { content: [{ type: "text", text: `done ${id}` }] } });

describe("postgresStore: many tasks written at once", { timeout: 40_000 }, () => {
  it("lease renewals, batched status changes and outcomes, and batched fetched marks never deadlock, and no outcome is lost", async () => {
    const schema = schemas.next();
    // Three nodes: the worker (renewals on one connection, its batched writes on others) and two fronts.
    const worker = postgresStore(URL_QUICK_DEADLOCKS, { schema, poolSize: 8 });
    const front = postgresStore(URL_QUICK_DEADLOCKS, { schema, poolSize: 4 });
    const otherFront = postgresStore(URL_QUICK_DEADLOCKS, { schema, poolSize: 4 });
    stores.push(worker, front, otherFront);
    await worker.migrate();
    const now = Date.now();
    // A table large enough for the planner to reach tasks through their index, as in production:
    // one statement then locks them in its batch's order, another in the index's.
    await Promise.all(Array.from({ length: 5_000 }, () => front.create(newTask({ createdAt: now, ttlMs: 600_000, name: "other" }))));
    await pgQuery(`ANALYZE "${schema}".tasks`);
    await Promise.all(Array.from({ length: TASKS }, () => worker.create(newTask({ createdAt: now, ttlMs: 600_000 }))));
    const claimed = await worker.claim(WORKER, TASKS, LEASE_MS, Date.now(), ["slow-tool"]);
    expect(claimed).toHaveLength(TASKS);
    const claims = new Map<string, Claim>(claimed.map((t) => [t.id, t.claim]));
    const ids = [...claims.keys()];
    const status = new Map<string, TaskStatus>(ids.map((id) => [id, "working"]));
    const failures: unknown[] = [];
    const deadline = Date.now() + RUN_MS;

    const renewing = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const held = await worker.renew(WORKER, shuffled(ids), LEASE_MS, Date.now()).catch((error: unknown) => {
          failures.push(error);
          return ids;
        });
        expect(held).toHaveLength(ids.length);
      }
    };
    // The worker's status changes, all of a round at once: the store batches them in the order made.
    const changing = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const round = shuffled(ids).slice(0, 60);
        await Promise.all(
          round.map(async (id) => {
            const from = status.get(id)!;
            const to: TaskStatus = from === "working" ? "input_required" : "working";
            const moved = await worker.transition(id, [from], to, { now: Date.now(), claim: claims.get(id)! }).catch((error: unknown) => {
              failures.push(error);
              return null;
            });
            if (moved) status.set(id, to);
          }),
        );
      }
    };
    // A front reading results of other tasks meanwhile: batched fetched marks of tasks that ended.
    const finished = await Promise.all(Array.from({ length: 60 }, () => worker.create(newTask({ createdAt: now, ttlMs: 600_000 }))));
    await Promise.all(finished.map((t) => worker.transition(t.id, ["working"], "completed", { now: Date.now(), outcome: done(t.id) })));
    // Two fronts marking the same results, each batch in an order of its own; unmarked again each round.
    const marking = async (): Promise<void> => {
      while (Date.now() < deadline) {
        await pgQuery(`UPDATE "${schema}".tasks SET fetched_at = NULL WHERE id = ANY ($1::text[])`, [finished.map((t) => t.id)]);
        const marks = await Promise.all(
          [front, otherFront].flatMap((node) =>
            shuffled(finished).map((t) => node.markFetched(t.id, Date.now()).catch((error: unknown) => failures.push(error))),
          ),
        );
        expect(marks.filter((first) => first === true)).toHaveLength(finished.length);
      }
    };

    await Promise.all([renewing(), renewing(), changing(), marking()]);
    // Every outcome, in one batch in a shuffled order, while leases are still being renewed.
    const endRenewals = Date.now() + 1_000;
    const lastRenewals = (async () => {
      while (Date.now() < endRenewals)
        await worker.renew(WORKER, shuffled(ids), LEASE_MS, Date.now()).catch((error: unknown) => failures.push(error));
    })();
    const outcomes = await Promise.all(
      shuffled(ids).map((id) =>
        worker
          .transition(id, [status.get(id)!], "completed", { now: Date.now(), outcome: done(id), claim: claims.get(id)! })
          .catch((error: unknown) => {
            failures.push(error);
            return null;
          }),
      ),
    );
    await lastRenewals;

    expect(failures.map((e) => (e as { code?: unknown; message?: unknown }).code ?? (e as Error).message)).toEqual([]);
    expect(outcomes.filter((t) => t === null)).toHaveLength(0);
    for (const id of ids) {
      const task = await front.get(id, { any: true });
      expect(task, id).toMatchObject({ status: "completed", outcome: done(id) });
    }
  });
});
