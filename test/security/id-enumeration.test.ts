/**
 * Attack suite, id enumeration (T-ID-2, T-SEC-3, T-ERR-1): random ids and near misses of a real
 * id — one hex digit changed, the same creation-time prefix with other random bits, upper-cased,
 * padded with whitespace, truncated, extended — must all be "not found" with exactly the answer
 * of an id that never existed, for the attacker and for the owner alike (a store that matched ids loosely would hand out a task to a near miss). Run on
 * a SQLite file and on PostgreSQL. Timing is not asserted.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { callToolAsTask, captureLogger } from "../support/conformance.js";
import type { HttpClient } from "../support/http-fixture.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";
import { ACCEPT_ANY, ACCEPT_JSON, postRpc } from "../support/rpc-exchange.js";
import { MALLORY, startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { unknownId } from "../support/victim-tasks.js";

let env: TwoPrincipals | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const schemas = freshSchemas("mcp_tasks_enum");
afterAll(() => schemas.dropAll());

const stores: Record<string, () => Partial<TaskServerOptions>> = {
  "a SQLite file": () => ({}),
  PostgreSQL: () => ({ store: postgresStore(TEST_PG_URL, { schema: schemas.next(), poolSize: 2 }) }),
};

/** Ids a guesser would try around a real one. */
function nearMisses(id: string): string[] {
  const misses = new Set<string>();
  for (let i = 0; i < id.length; i++) {
    const c = id[i] ?? "";
    if (!/[0-9a-f]/.test(c)) continue;
    misses.add(id.slice(0, i) + ((parseInt(c, 16) + 1) % 16).toString(16) + id.slice(i + 1));
  }
  misses.add(id.toUpperCase());
  for (const padded of [` ${id}`, `${id} `, `\t${id}`, `${id}\n`, ` ${id} `, `${id}\u00a0`]) misses.add(padded);
  for (const n of [1, 8, 9, 10, 20, 30, 40]) misses.add(id.slice(0, n));
  // The prefix is the creation millisecond, which a guesser may know: the same prefix with other random bits.
  for (let i = 0; i < 20; i++) misses.add(id.slice(0, 9) + unknownId().slice(9));
  misses.add(`${id.slice(0, 9)}%`);
  misses.add(`{${id}}`);
  for (const tail of ["0", "%", "\u0000", "\u0000x", "'", "*"]) misses.add(id + tail);
  misses.add(`${id.slice(0, 8)}%`);
  misses.delete(id);
  return [...misses];
}

/** The exact body answering `method` for `taskId` (request id fixed, so bodies compare as text). */
async function answerText(env: TwoPrincipals, who: HttpClient, method: string, taskId: string): Promise<string> {
  const stream = method === "tasks/result";
  const exchange = await postRpc(env.fx.url, { jsonrpc: "2.0", id: 1, method, params: { taskId } }, who.headers(), {
    accept: stream ? ACCEPT_ANY : ACCEPT_JSON,
    timeoutMs: 5_000,
  });
  return `${exchange.status} ${JSON.stringify(exchange.messages)}`;
}

describe.each(Object.keys(stores))("id enumeration on %s (T-ID-2, T-ERR-1)", (storeName) => {
  async function setUp(app: Partial<TaskServerOptions> = {}): Promise<{ env: TwoPrincipals; real: string }> {
    env = await startTwoPrincipals({ app: { ...stores[storeName]?.(), ...app } });
    const real = (await callToolAsTask(env.alice.client, "sleep", { ms: 600_000 })).task.taskId;
    return { env, real };
  }

  it("answers 100 ids that were never made and every near miss of a real id exactly like an unknown id, for get, result and cancel, to the attacker and to the owner", async () => {
    const { env, real } = await setUp();
    const guesses = [...Array.from({ length: 100 }, unknownId), ...nearMisses(real)];
    const mismatches: string[] = [];
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const baseline = await answerText(env, env.mallory, method, unknownId());
      expect(baseline).toMatch(/"code":-32602,"message":"[^"]*Task not found"/);
      for (const who of [env.mallory, env.alice]) {
        for (const guess of guesses) {
          const answer = await answerText(env, who, method, guess);
          if (answer !== baseline) mismatches.push(`${method} ${JSON.stringify(guess)}: ${answer}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // The real id is still alice's and still running: no guess touched it.
    expect(await answerText(env, env.alice, "tasks/get", real)).toContain('"status":"working"');
    // About 1,300 requests one after another: seconds on a quiet machine, more on a loaded one.
  }, 60_000);

  it("logs every failed lookup for the audit trail with the owner who tried (T-SEC-5)", async () => {
    const logger = captureLogger();
    const { env, real } = await setUp({ logger });
    const guesses = nearMisses(real).slice(0, 5);
    for (const guess of guesses) await answerText(env, env.mallory, "tasks/get", guess);
    const denied = logger.entries
      .filter((e) => e.obj["audit"] === "lookup_denied" && e.obj["owner"] === MALLORY.owner)
      .map((e) => e.obj["taskId"]);
    expect(denied).toEqual(guesses);
  });
});
