/** `subscriptions/listen` with `notifications.taskIds` and `notifications/tasks` (X-NOTE) over real HTTP (SSE). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { envelope, statelessResult, statelessRpc, V2026 } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer();
});
afterAll(() => server.close());

type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/** POSTs a listen request and collects its SSE messages until the server ends the stream (or `until` holds, then hangs up). */
async function listen(
  taskIds: string[],
  id: number,
  until?: (messages: Message[]) => boolean,
): Promise<{ status: number; type: string | null; messages: Message[] }> {
  const controller = new AbortController();
  const response = await fetch(server.url, {
    method: "POST",
    signal: controller.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V2026,
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { _meta: envelope(), notifications: { taskIds } } }),
  });
  const messages: Message[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .find((line) => line.startsWith("data: "));
        buffer = buffer.slice(end + 2);
        if (data) messages.push(JSON.parse(data.slice(6)) as Message);
      }
      if (until?.(messages)) break;
    }
  } finally {
    controller.abort();
  }
  return { status: response.status, type: response.headers.get("content-type"), messages };
}

describe("subscriptions/listen for tasks (X-NOTE)", { timeout: 15_000 }, () => {
  it("acknowledges first, with the subscription id and the task ids it will notify about (X-NOTE-3, X-NOTE-8)", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} });
    const { type, messages } = await listen([String(created["taskId"])], 41);
    expect(type).toMatch(/text\/event-stream/);
    expect(messages[0]).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": 41 }, notifications: { taskIds: [created["taskId"]] } },
    });
  });

  it("sends notifications/tasks with the DetailedTask of each change, each carrying the subscription id, until the task ends (X-NOTE-5, X-NOTE-8)", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "slow_compute", arguments: { seconds: 1, label: "n" } });
    const { messages } = await listen([String(created["taskId"])], 42);
    const notes = messages.filter((m) => m.method === "notifications/tasks");
    expect(notes.at(-1)?.params).toMatchObject({
      _meta: { "io.modelcontextprotocol/subscriptionId": 42 },
      taskId: created["taskId"],
      status: "completed",
      result: { content: [{ type: "text" }] },
    });
    for (const note of notes) expect(note.params?.["_meta"]).toEqual({ "io.modelcontextprotocol/subscriptionId": 42 });
    expect(notes.map((n) => n.params?.["status"])).toContain("working");
  });

  it("ends the stream with the listen result once every task is terminal", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} });
    const { messages } = await listen([String(created["taskId"])], 43);
    expect(messages.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: 43,
      result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": 43 } },
    });
  });

  it("carries inputRequests in the notification of an input_required task (X-NOTE-5)", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "confirm_delete", arguments: { filename: "n.txt" } });
    const { messages } = await listen([String(created["taskId"])], 44, (m) => m.some((x) => x.params?.["status"] === "input_required"));
    const parked = messages.find((m) => m.params?.["status"] === "input_required");
    expect(Object.values(parked?.params?.["inputRequests"] as object)).toMatchObject([{ method: "elicitation/create" }]);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("leaves an unknown task id out of the acknowledgement and sends nothing about it", async () => {
    const { messages } = await listen(["no-such-task"], 45);
    expect(messages[0]?.params?.["notifications"]).toEqual({});
    expect(messages.filter((m) => m.method === "notifications/tasks")).toEqual([]);
  });

  it("refuses task notifications to a request that did not declare the extension with -32021 (X-NOTE-4)", async () => {
    const { status, body } = await statelessRpc(
      server.url,
      "subscriptions/listen",
      { notifications: { taskIds: ["x"] } },
      { declare: false },
    );
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32021);
  });
});
