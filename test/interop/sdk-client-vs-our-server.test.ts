import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

/** The official SDK client's experimental task API against our receiver, over Streamable HTTP. */
let server: HttpServerFixture;
beforeEach(async () => {
  server = await startHttpServer({ app: { pollIntervalMs: 50 } });
});
afterEach(async () => {
  await server.close();
});

type StreamMessage = { type: string; task?: { taskId: string; status: string }; result?: unknown; error?: unknown };

async function drain(stream: AsyncIterable<unknown>): Promise<StreamMessage[]> {
  const messages: StreamMessage[] = [];
  for await (const message of stream) messages.push(message as StreamMessage);
  return messages;
}

describe("interop: SDK client (experimental tasks) → our server", () => {
  it("callToolStream: taskCreated, taskStatus…, result for a task-augmented call", async () => {
    const { client } = await server.connect();
    await client.listTools();
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: "sleep", arguments: { ms: 120 } }, undefined, { task: { ttl: 60_000 } }),
    );
    expect(messages[0]?.type).toBe("taskCreated");
    expect(messages.some((m) => m.type === "taskStatus")).toBe(true);
    const last = messages.at(-1);
    expect(last?.type).toBe("result");
    expect((last?.result as CallToolResult).content).toEqual([{ type: "text", text: "slept 120 ms" }]);
  });

  it("callToolStream of a required tool: the SDK client sends it as a task on its own (it read execution.taskSupport)", async () => {
    const { client } = await server.connect();
    await client.listTools();
    const messages = await drain(client.experimental.tasks.callToolStream({ name: "batch", arguments: { ms: 10 } }));
    expect(messages[0]?.type).toBe("taskCreated");
    expect(messages.at(-1)?.type).toBe("result");
  });

  it("callToolStream with input_required: the SDK client's elicitation handler answers through tasks/result", async () => {
    const { client } = await server.connect();
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "sdk" } }));
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: "ask", arguments: { question: "?" } }, undefined, { task: {} }),
    );
    expect((messages.at(-1)?.result as CallToolResult).content).toEqual([{ type: "text", text: "answer: sdk" }]);
  });

  it("getTask, listTasks, cancelTask", async () => {
    const { client } = await server.connect();
    const created = (await drainUntilCreated(
      client.experimental.tasks.callToolStream({ name: "sleep", arguments: { ms: 60_000 } }, undefined, { task: {} }),
    )) as {
      taskId: string;
    };
    expect((await client.experimental.tasks.getTask(created.taskId)).status).toBe("working");
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(created.taskId);
    const cancelled = await client.experimental.tasks.cancelTask(created.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect((await client.experimental.tasks.getTask(created.taskId)).status).toBe("cancelled");
  });
});

/** Reads a callToolStream until its taskCreated message and leaves the rest (the task keeps running). */
async function drainUntilCreated(stream: AsyncGenerator<unknown>): Promise<unknown> {
  for await (const message of stream) {
    const m = message as StreamMessage;
    if (m.type === "taskCreated") {
      void stream.return(undefined);
      return m.task;
    }
  }
  throw new Error("no taskCreated");
}
