/**
 * Attack suite, owner binding through the SDK client (T-SEC-1, T-SEC-3, T-ERR-1): mallory, a
 * second authenticated principal, goes after alice's tasks with every tasks/* method. Every
 * answer she gets for one of alice's ids must be exactly the answer for an id that never existed
 * (ids cannot be probed), and alice's tasks must be exactly as they were. Run with local sessions
 * and with shared (cluster) sessions, whose endpoint has its own request paths.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { callToolAsTask, cancelTask, expectRpcError, getTask, listAllTasks, listTasks, taskResult } from "../support/conformance.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { allIds, createVictimTasks, outcomeOf, snapshot, unknownId, type VictimTasks } from "../support/victim-tasks.js";

let env: TwoPrincipals | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const PAGE = 2;

async function setUp(sessions: "local" | "shared"): Promise<{ env: TwoPrincipals; victim: VictimTasks; before: Record<string, unknown> }> {
  env = await startTwoPrincipals({ app: { pageSize: PAGE }, http: { sessions } });
  const victim = await createVictimTasks(env.alice);
  return { env, victim, before: await snapshot(env.alice.client, victim) };
}

const methods: Record<string, (client: Client, taskId: string) => Promise<unknown>> = {
  "tasks/get": getTask,
  "tasks/result": taskResult,
  "tasks/cancel": cancelTask,
};

describe.each(["local", "shared"] as const)(
  "owner binding: another principal's tasks through the SDK client (T-SEC-3) with %s sessions",
  (sessions) => {
    it("answers mallory's tasks/get, tasks/result and tasks/cancel on each of alice's tasks exactly as for an unknown id: -32602, same message (T-ERR-1)", async () => {
      const { env, victim } = await setUp(sessions);
      const leaks: string[] = [];
      let attempts = 0;
      for (const [method, call] of Object.entries(methods)) {
        const baseline = await outcomeOf(call(env.mallory.client, unknownId()));
        expect(baseline).toEqual({ error: { code: -32602, message: expect.stringMatching(/Task not found$/) } });
        for (const taskId of allIds(victim)) {
          attempts++;
          const answer = await outcomeOf(call(env.mallory.client, taskId));
          if (JSON.stringify(answer) !== JSON.stringify(baseline)) leaks.push(`${method} ${taskId}: ${JSON.stringify(answer)}`);
        }
      }
      expect(attempts).toBe(12);
      expect(leaks).toEqual([]);
    });

    it("leaves alice's tasks exactly as they were after mallory's attempts: status, times, results (0 changes)", async () => {
      const { env, victim, before } = await setUp(sessions);
      for (const call of Object.values(methods)) for (const taskId of allIds(victim)) await outcomeOf(call(env.mallory.client, taskId));
      expect(await snapshot(env.alice.client, victim)).toEqual(before);
      // Still hers to act on: the running task is cancellable by its owner.
      expect((await cancelTask(env.alice.client, victim.working)).status).toBe("cancelled");
    });

    it("never lists alice's tasks to mallory, on any page of tasks/list (T-SEC-3, T-LIST)", async () => {
      const { env, victim } = await setUp(sessions);
      const own = [];
      for (let i = 0; i < 3; i++) own.push((await callToolAsTask(env.mallory.client, "sleep", { ms: 1 })).task.taskId);
      const first = await listTasks(env.mallory.client);
      expect(first.nextCursor).toBeDefined(); // more than one page: the walk below crosses pages
      const seen = (await listAllTasks(env.mallory.client)).map((t) => t.taskId);
      expect(seen.sort()).toEqual(own.sort());
      expect(seen.filter((id) => allIds(victim).includes(id))).toEqual([]);
      // And alice still sees all of hers.
      expect((await listAllTasks(env.alice.client)).map((t) => t.taskId).sort()).toEqual(allIds(victim).sort());
    });

    it("refuses alice's tasks/list cursor presented by mallory with -32602 'Invalid cursor', the answer to a garbage cursor (T-ERR-2)", async () => {
      const { env } = await setUp(sessions);
      const alicesCursor = (await listTasks(env.alice.client)).nextCursor;
      expect(alicesCursor).toBeDefined();
      const garbage = await expectRpcError(listTasks(env.mallory.client, "not-a-cursor"), -32602, "Invalid cursor");
      const foreign = await expectRpcError(listTasks(env.mallory.client, alicesCursor), -32602, "Invalid cursor");
      expect(foreign.message).toBe(garbage.message);
    });

    it("refuses a tampered cursor, even to the principal it was issued to: -32602 'Invalid cursor' (T-ERR-2)", async () => {
      const { env } = await setUp(sessions);
      const cursor = (await listTasks(env.alice.client)).nextCursor ?? "";
      const [body, mac] = cursor.split(".");
      const decoded = JSON.parse(Buffer.from(body ?? "", "base64url").toString()) as [number, string];
      const tampered = [
        `${Buffer.from(JSON.stringify([decoded[0] + 1, decoded[1]])).toString("base64url")}.${mac}`,
        `${body}.${(mac ?? "").slice(0, -1)}${(mac ?? "").endsWith("A") ? "B" : "A"}`,
        `${body}.`,
        body ?? "",
      ];
      for (const bad of tampered) await expectRpcError(listTasks(env.alice.client, bad), -32602, "Invalid cursor");
      // The untouched cursor still works for her.
      expect((await listTasks(env.alice.client, cursor)).tasks.length).toBeGreaterThan(0);
    });

    it("keeps mallory's own tasks out of alice's reach too: the binding is symmetric", async () => {
      const { env } = await setUp(sessions);
      const hers = (await callToolAsTask(env.mallory.client, "sleep", { ms: 600_000 })).task.taskId;
      for (const call of Object.values(methods)) await expectRpcError(call(env.alice.client, hers), -32602, /Task not found$/);
      expect((await getTask(env.mallory.client, hers)).status).toBe("working");
    });
  },
);
