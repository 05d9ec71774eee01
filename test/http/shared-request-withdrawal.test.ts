/**
 * On shared (cluster-style) sessions every POST is served on its own, so a requestor's
 * notifications/cancelled arrives in another POST than the request it withdraws; it must still
 * reach that request (here: one node, the request served by a per-request SDK server).
 */
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callToolAsTask, deferred, taskResult } from "../support/conformance.js";

let fx: HttpServerFixture;

beforeEach(async () => {
  fx = await startHttpServer({ http: { sessions: "shared" } });
});
afterEach(async () => fx.close());

describe("notifications/cancelled on shared sessions", () => {
  it("withdraws a tasks/result streaming a question: the question is withdrawn from the requestor, and the next tasks/result gets it (T-INPUT-5)", async () => {
    const c = await fx.connect({ capabilities: { elicitation: { form: {} } } });
    const asked = deferred<void>();
    const withdrawn = deferred<unknown>();
    let answer = false;
    c.client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      if (answer) return { action: "accept", content: { answer: "still here" } };
      extra.signal.addEventListener("abort", () => withdrawn.resolve(extra.signal.reason));
      asked.resolve();
      return new Promise<never>(() => {});
    });
    const { task } = await callToolAsTask(c.client, "ask", { question: "Still there?" });
    const giveUp = new AbortController();
    const abandoned = c.client.request({ method: "tasks/result", params: { taskId: task.taskId } }, CallToolResultSchema, {
      signal: giveUp.signal,
    });
    await asked.promise;
    giveUp.abort("no longer waiting");
    await abandoned.catch(() => {});

    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("the question was never withdrawn")), 2_000));
    await Promise.race([withdrawn.promise, timeout]);
    answer = true;
    expect((await taskResult(c.client, task.taskId)).content).toEqual([{ type: "text", text: "answer: still here" }]);
  });

  it("a notifications/cancelled POSTed on another session, naming the same request id, leaves the request alone (T-SEC-3)", async () => {
    const owner = await fx.connect();
    const stranger = await fx.connect();
    const { task } = await callToolAsTask(owner.client, "sleep", { ms: 800 });
    const waiting = taskResult(owner.client, task.taskId);
    // The owner's SDK client numbers its requests 0 (initialize), 1 (tools/call), 2 (this tasks/result).
    await new Promise((resolve) => setTimeout(resolve, 200)); // the tasks/result is being served by now
    await stranger.client.notification({ method: "notifications/cancelled", params: { requestId: 2, reason: "not yours" } });
    expect((await waiting).content).toEqual([{ type: "text", text: "slept 800 ms" }]);
    expect(owner.exchanges.items.find((e) => e.body?.method === "tasks/result")?.body?.id).toBe(2);
  });
});
