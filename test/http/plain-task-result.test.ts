/**
 * tasks/result is answered as one plain JSON response when the requestor's stream would carry
 * nothing but the answer — on shared (cluster-style) sessions, and on a local session whose
 * standalone GET stream is open, where the session's own tasks send their notifications — and
 * handed to the streaming path, still unanswered, as soon as the task has something only a
 * stream can carry (T-INPUT-3, T-RES-3). The same cases run over both kinds of session.
 */
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { scrape, valueOf } from "../support/prometheus.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";

let fx: HttpServerFixture;

const resultExchanges = (c: Awaited<ReturnType<HttpServerFixture["connect"]>>) =>
  c.exchanges.filter((e) => e.method === "POST" && e.body?.method === "tasks/result");

for (const sessions of ["shared", "local"] as const) {
  describe(`tasks/result without a stream (${sessions} sessions, the GET stream open)`, () => {
    beforeEach(async () => {
      fx = await startHttpServer({ http: { sessions } });
      // Works a while before it asks, so the requestor's tasks/result is already blocked when it does.
      fx.app.tool(
        "ask-later",
        { description: "Waits, then asks.", input: z.object({ ms: z.number() }), taskSupport: "optional" },
        async ({ ms }, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          const answer = await ctx.elicit({
            mode: "form",
            message: "colour?",
            requestedSchema: { type: "object", properties: { c: { type: "string" } } },
          });
          return { content: [{ type: "text" as const, text: `got ${String(answer.content?.["c"])}` }] };
        },
      );
    });
    afterEach(async () => fx.close());

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
      // The question first and the answer last; a local session's open tasks/result also carries
      // the task's status changes between them (they go where a request of the session waits).
      const carried = exchange?.messages.map((m) => m.method ?? "response") ?? [];
      expect(carried[0]).toBe("elicitation/create");
      expect(carried.at(-1)).toBe("response");
      expect(carried.slice(1, -1).every((method) => method === "notifications/tasks/status")).toBe(true);
    });

    it("a notifications/cancelled naming a blocked tasks/result withdraws it: its response ends with no answer, and the task goes on", async () => {
      const c = await fx.connect();
      const { task } = await callToolAsTask(c.client, "sleep", { ms: 1_500 });
      const blocked = rawPost(
        fx.url,
        { jsonrpc: "2.0", id: "waiting-1", method: "tasks/result", params: { taskId: task.taskId } },
        c.headers(),
      );
      await expect.poll(async () => valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(1);
      const cancel = await rawPost(
        fx.url,
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "waiting-1", reason: "no longer needed" } },
        c.headers(),
      );
      expect(cancel.status).toBe(202);

      const withdrawn = await blocked;
      expect(withdrawn.status).toBe(200);
      expect(withdrawn.text).not.toContain("jsonrpc");
      expect(valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(0);
      expect((await taskResult(c.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
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
}

describe("tasks/result on a local session that has not opened its GET stream", () => {
  beforeEach(async () => {
    fx = await startHttpServer({ http: { sessions: "local" } });
  });
  afterEach(async () => fx.close());

  it("is answered on a stream of its own, the only place the task's notifications can go (T-NOTE-1, T-PROG-1)", async () => {
    // Raw requests: the SDK's client would open the GET stream by itself.
    const post = (headers: Record<string, string>, message: Record<string, unknown>) =>
      fetch(fx.url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      });
    const init = await post(
      {},
      {
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      },
    );
    const headers = { "mcp-session-id": init.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": "2025-11-25" };
    await init.text();
    expect((await post(headers, { method: "notifications/initialized" })).status).toBe(202);
    const created = await post(headers, {
      id: 2,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 50 }, task: { ttl: 60_000 } },
    });
    const taskId = /"taskId":"([^"]+)"/.exec(await created.text())?.[1];
    expect(taskId).toBeDefined();
    const result = await post(headers, { id: 3, method: "tasks/result", params: { taskId } });
    expect(result.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await result.text()).toContain("slept 50 ms");
  });
});

describe("a local session that ends while its tasks/result waits as plain JSON", () => {
  beforeEach(async () => {
    fx = await startHttpServer({ http: { sessions: "local" } });
  });
  afterEach(async () => fx.close());

  it("releases the waiting request with 404 Session not found, and the task runs on", async () => {
    const c = await fx.connect();
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 60_000 });
    const pending = taskResult(c.client, task.taskId).then(
      () => "answered",
      (error: unknown) => String(error),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await c.transport.terminateSession();
    expect(await pending).toMatch(/404|Session not found/);
    const other = await fx.connect();
    expect((await getTask(other.client, task.taskId)).status).toBe("working");
  });
});
