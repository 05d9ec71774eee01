/**
 * Attack suite, owner binding on the plain-JSON HTTP path (src/http/direct-task-requests.ts):
 * tasks/get, tasks/list, tasks/cancel and task-augmented tools/call POSTed with fetch, answered as
 * application/json without the SDK transport — the same rules must hold there (T-SEC-3, T-ERR-1).
 * Answers are compared byte for byte: same request id, so a foreign id must give the very same body.
 * Run with local and with shared (cluster) sessions, whose endpoint has its own plain-JSON paths.
 */
import { afterEach, describe, expect, it } from "vitest";
import { getTask } from "../support/conformance.js";
import { ACCEPT_ANY, ACCEPT_JSON, answerTo, postRpc } from "../support/rpc-exchange.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { allIds, createVictimTasks, snapshot, unknownId, type VictimTasks } from "../support/victim-tasks.js";

let env: TwoPrincipals | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

async function setUp(sessions: "local" | "shared"): Promise<{ env: TwoPrincipals; victim: VictimTasks }> {
  env = await startTwoPrincipals({ app: { pageSize: 2 }, http: { sessions } });
  return { env, victim: await createVictimTasks(env.alice) };
}

const request = (id: number, method: string, params: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method, params });

describe.each(["local", "shared"] as const)("owner binding on the plain-JSON HTTP path (T-SEC-3) with %s sessions", (sessions) => {
  it("answers mallory's JSON tasks/get and tasks/cancel on alice's ids with the very bytes it answers for an unknown id", async () => {
    const { env, victim } = await setUp(sessions);
    const leaks: string[] = [];
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const baseline = await postRpc(env.fx.url, request(1, method, { taskId: unknownId() }), env.mallory.headers(), {
        accept: ACCEPT_JSON,
      });
      expect(baseline.status).toBe(200);
      expect(baseline.contentType).toMatch(/^application\/json/);
      expect(answerTo(baseline, 1)?.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found$/) });
      for (const taskId of allIds(victim)) {
        const answer = await postRpc(env.fx.url, request(1, method, { taskId }), env.mallory.headers(), { accept: ACCEPT_JSON });
        if (answer.status !== baseline.status || answer.text !== baseline.text)
          leaks.push(`${method} ${taskId}: ${answer.status} ${answer.text}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it("answers mallory's raw tasks/result (SSE) on alice's ids exactly as for an unknown id, at once, even for her running task", async () => {
    const { env, victim } = await setUp(sessions);
    const baseline = await postRpc(env.fx.url, request(7, "tasks/result", { taskId: unknownId() }), env.mallory.headers(), {
      accept: ACCEPT_ANY,
    });
    expect(answerTo(baseline, 7)?.error).toMatchObject({ code: -32602, message: "Failed to retrieve task result: Task not found" });
    for (const taskId of allIds(victim)) {
      const answer = await postRpc(env.fx.url, request(7, "tasks/result", { taskId }), env.mallory.headers(), {
        accept: ACCEPT_ANY,
        timeoutMs: 5_000,
      });
      expect(answer.status).toBe(baseline.status);
      // Nothing else on the stream either (no input request, no notification of alice's task).
      expect(answer.messages).toEqual(baseline.messages);
    }
  });

  it("lists none of alice's tasks to mallory over JSON, and refuses alice's cursor like a garbage one", async () => {
    const { env, victim } = await setUp(sessions);
    const alicesPage = await postRpc(env.fx.url, request(1, "tasks/list", {}), env.alice.headers(), { accept: ACCEPT_JSON });
    const alicesCursor = answerTo(alicesPage, 1)?.result?.["nextCursor"];
    expect(typeof alicesCursor).toBe("string");

    const mine = await postRpc(env.fx.url, request(2, "tasks/list", {}), env.mallory.headers(), { accept: ACCEPT_JSON });
    expect(answerTo(mine, 2)?.result).toEqual({ tasks: [] });
    for (const taskId of allIds(victim)) expect(mine.text).not.toContain(taskId);

    const garbage = await postRpc(env.fx.url, request(3, "tasks/list", { cursor: "garbage" }), env.mallory.headers(), {
      accept: ACCEPT_JSON,
    });
    const foreign = await postRpc(env.fx.url, request(3, "tasks/list", { cursor: alicesCursor }), env.mallory.headers(), {
      accept: ACCEPT_JSON,
    });
    expect(answerTo(garbage, 3)?.error).toEqual({ code: -32602, message: "Invalid cursor" });
    expect(foreign.text).toBe(garbage.text);
  });

  it("binds a task created by mallory's JSON tools/call to mallory: alice cannot see it, mallory can", async () => {
    const { env } = await setUp(sessions);
    const created = await postRpc(
      env.fx.url,
      request(4, "tools/call", { name: "sleep", arguments: { ms: 600_000 }, task: { ttl: 60_000 } }),
      env.mallory.headers(),
      { accept: ACCEPT_JSON },
    );
    const taskId = (answerTo(created, 4)?.result?.["task"] as { taskId: string } | undefined)?.taskId ?? "";
    expect(taskId).not.toBe("");
    const byAlice = await postRpc(env.fx.url, request(5, "tasks/get", { taskId }), env.alice.headers(), { accept: ACCEPT_JSON });
    const unknown = await postRpc(env.fx.url, request(5, "tasks/get", { taskId: unknownId() }), env.alice.headers(), {
      accept: ACCEPT_JSON,
    });
    expect(byAlice.text).toBe(unknown.text);
    expect((await getTask(env.mallory.client, taskId)).status).toBe("working");
  });

  it("leaves alice's tasks unchanged after mallory's JSON attempts", async () => {
    const { env, victim } = await setUp(sessions);
    const before = await snapshot(env.alice.client, victim);
    for (const taskId of allIds(victim)) {
      for (const method of ["tasks/get", "tasks/cancel"]) {
        await postRpc(env.fx.url, request(1, method, { taskId }), env.mallory.headers(), { accept: ACCEPT_JSON });
      }
    }
    expect(await snapshot(env.alice.client, victim)).toEqual(before);
  });
});
