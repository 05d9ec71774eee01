/**
 * tasks/result on shared (cluster-style) sessions is answered as one plain JSON response when the
 * requestor's stream would carry nothing but the answer, and handed to the streaming path, still
 * unanswered, as soon as the task has something only a stream can carry (T-INPUT-3, T-RES-3).
 */
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callToolAsTask, cancelTask, expectRpcError, taskResult } from "../support/conformance.js";

let fx: HttpServerFixture;

beforeEach(async () => {
  fx = await startHttpServer({ http: { sessions: "shared" } });
  // Works a while before it asks, so the requestor's tasks/result is already blocked when it does.
  fx.app.tool("ask-later", { description: "Waits, then asks.", input: z.object({ ms: z.number() }), taskSupport: "optional" }, async ({ ms }, ctx) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    const answer = await ctx.elicit({ mode: "form", message: "colour?", requestedSchema: { type: "object", properties: { c: { type: "string" } } } });
    return { content: [{ type: "text" as const, text: `got ${String(answer.content?.["c"])}` }] };
  });
});
afterEach(async () => fx.close());

const resultExchanges = (c: Awaited<ReturnType<HttpServerFixture["connect"]>>) =>
  c.exchanges.filter((e) => e.method === "POST" && e.body?.method === "tasks/result");

describe("tasks/result without a stream (shared sessions)", () => {
  it("answers a blocked tasks/result of the session's own task with one application/json response (T-RES-3)", async () => {
    const c = await fx.connect();
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 50 });
    const result = await taskResult(c.client, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 50 ms" }]);
    const [exchange] = resultExchanges(c);
    expect(exchange?.contentType).toMatch(/^application\/json/);
    expect(exchange?.messages).toHaveLength(1);
  });

  it("replays a failed task's error and answers -32800 for a cancelled one, as the streaming path does (T-RES-4)", async () => {
    const c = await fx.connect();
    const { task: failing } = await callToolAsTask(c.client, "throw", { code: -32001, message: "boom" });
    await expectRpcError(taskResult(c.client, failing.taskId), -32001, /boom/);
    const { task: slow } = await callToolAsTask(c.client, "sleep", { ms: 60_000 });
    const refused = expectRpcError(taskResult(c.client, slow.taskId), -32800);
    await cancelTask(c.client, slow.taskId);
    await refused;
  });

  it("answers an unknown id with the same -32602 as the streaming path (T-ERR-1)", async () => {
    const c = await fx.connect();
    await expectRpcError(taskResult(c.client, "no-such-task"), -32602, /Failed to retrieve task result: Task not found/);
  });

  it("hands a blocked tasks/result to a stream when the task asks for input meanwhile, and the answer resumes the task (T-INPUT-3)", async () => {
    const c = await fx.connect();
    c.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { c: "teal" } }));
    const { task } = await callToolAsTask(c.client, "ask-later", { ms: 150 });
    const result = await taskResult(c.client, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "got teal" }]);
    const [exchange] = resultExchanges(c);
    expect(exchange?.contentType).toMatch(/^text\/event-stream/);
    expect(exchange?.messages.map((m) => m.method ?? "response")).toEqual(["elicitation/create", "response"]);
  });

  it("streams a tasks/result for another session's task, which carries that task's notifications (T-NOTE-1)", async () => {
    const creator = await fx.connect();
    const other = await fx.connect();
    const { task } = await callToolAsTask(creator.client, "sleep", { ms: 100 });
    await taskResult(other.client, task.taskId);
    const [exchange] = resultExchanges(other);
    expect(exchange?.contentType).toMatch(/^text\/event-stream/);
  });
});
