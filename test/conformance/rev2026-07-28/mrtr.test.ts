/**
 * MRTR rounds (SEP-2322) on 2026-07-28 tools/call: a plain call whose handler asks, and a tool's
 * `gather` before its task (X-MRTR-1..5); and `gather` under 2025-11-25 on the same server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { callToolAsTask, taskResult } from "../../support/conformance.js";
import { connectHttpClient } from "../../support/http-fixture.js";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { isTerminal, pollTask, statelessResult, statelessRpc } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer();
});
afterAll(() => server.close());

const accept = (content: Record<string, unknown>) => ({ action: "accept", content });

describe("a plain call whose handler asks (X-MRTR-1, X-MRTR-5)", () => {
  it("answers with an InputRequiredResult: resultType input_required, the question under a key, a requestState, no taskId", async () => {
    const round = await statelessResult(server.url, "tools/call", { name: "ask_plain", arguments: { greeting: "Hi" } });
    expect(round).toMatchObject({
      resultType: "input_required",
      inputRequests: { "input-1": { method: "elicitation/create", params: { message: "Name?" } } },
      requestState: expect.any(String),
    });
    expect(round).not.toHaveProperty("taskId");
  });

  it("runs round by round until every question is answered, then answers with the result", async () => {
    const args = { name: "ask_plain", arguments: { greeting: "Hi" } };
    const first = await statelessResult(server.url, "tools/call", args);
    const second = await statelessResult(server.url, "tools/call", {
      ...args,
      inputResponses: { "input-1": accept({ name: "Ada" }) },
      requestState: first["requestState"],
    });
    expect(Object.keys(second["inputRequests"] as object)).toEqual(["input-2"]);
    const done = await statelessResult(server.url, "tools/call", {
      ...args,
      inputResponses: { "input-2": accept({ sure: true }) },
      requestState: second["requestState"],
    });
    expect(done).toEqual({ resultType: "complete", content: [{ type: "text", text: "Hi Ada (sure)" }] });
  });

  it("refuses a tampered requestState with -32602", async () => {
    const args = { name: "ask_plain", arguments: { greeting: "Hi" } };
    const first = await statelessResult(server.url, "tools/call", args);
    const [body, mac] = String(first["requestState"]).split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(String(body), "base64url").toString()), answers: { "input-1": accept({ name: "Eve" }) } }),
    ).toString("base64url");
    const { status, body: answer } = await statelessRpc(server.url, "tools/call", {
      ...args,
      inputResponses: {},
      requestState: `${forged}.${mac}`,
    });
    expect(status).toBe(400);
    expect(answer.error?.code).toBe(-32602);
  });

  it("refuses a requestState issued for other arguments with -32602", async () => {
    const first = await statelessResult(server.url, "tools/call", { name: "ask_plain", arguments: { greeting: "Hi" } });
    const { body } = await statelessRpc(server.url, "tools/call", {
      name: "ask_plain",
      arguments: { greeting: "Bye" },
      inputResponses: { "input-1": accept({ name: "Ada" }) },
      requestState: first["requestState"],
    });
    expect(body.error?.code).toBe(-32602);
  });

  it("asks nothing of a client that did not declare elicitation: the call fails instead (X-MRTR-5)", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "ask_plain", arguments: { greeting: "Hi" } },
      { capabilities: {} },
    );
    expect(body.error?.message).toMatch(/elicitation/);
    expect(body.result).toBeUndefined();
  });
});

describe("gather before the task (X-MRTR-2, X-MRTR-4)", () => {
  it("asks in round 1 with no task, then answers round 2 with a CreateTaskResult without requestState or inputRequests", async () => {
    const args = { name: "test_tool_with_task", arguments: {} };
    const first = await statelessResult(server.url, "tools/call", args);
    expect(first["resultType"]).toBe("input_required");
    expect(first).not.toHaveProperty("taskId");
    const [key] = Object.keys(first["inputRequests"] as object);
    const created = await statelessResult(server.url, "tools/call", {
      ...args,
      inputResponses: { [String(key)]: accept({ name: "Alice" }) },
      requestState: first["requestState"],
    });
    expect(created["resultType"]).toBe("task");
    expect(created).not.toHaveProperty("requestState");
    expect(created).not.toHaveProperty("inputRequests");
  });

  it("hands the gathered answer to the task's handler", async () => {
    const args = { name: "test_tool_with_task", arguments: {} };
    const first = await statelessResult(server.url, "tools/call", args);
    const created = await statelessResult(server.url, "tools/call", {
      ...args,
      inputResponses: { "input-1": accept({ name: "Alice" }) },
      requestState: first["requestState"],
    });
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Hello, Alice! The task finished." }] } });
    expect(task).not.toHaveProperty("requestState");
  });
});

describe("gather under 2025-11-25", () => {
  it("runs first in a plain call, its question sent on the call's stream", async () => {
    const session = await connectHttpClient(server.url);
    try {
      session.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Grace" } }));
      const result = await session.client.callTool({ name: "gather_optional", arguments: {} }, CallToolResultSchema);
      expect(result.content).toEqual([{ type: "text", text: "gathered Grace" }]);
    } finally {
      await session.close();
    }
  });

  it("runs first in a task, as the task's first question (input_required, answered on the tasks/result stream)", async () => {
    const session = await connectHttpClient(server.url);
    try {
      session.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Hopper" } }));
      const created = await callToolAsTask(session.client, "gather_optional", {});
      const result = await taskResult(session.client, created.task.taskId);
      expect(result.content).toEqual([{ type: "text", text: "gathered Hopper" }]);
    } finally {
      await session.close();
    }
  });
});
