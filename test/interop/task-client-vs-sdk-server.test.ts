import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TaskClient, type TaskClientOptions } from "../../src/client/task-client.js";
import { startSdkTaskServer, type SdkTaskServer } from "../support/sdk-task-server.js";

/** Our TaskClient against a receiver built on the official SDK's own experimental tasks. */
let sdk: SdkTaskServer;
const opened: { client: Client; tasks: TaskClient }[] = [];

beforeEach(async () => {
  sdk = await startSdkTaskServer({ pollIntervalMs: 50 });
});
afterEach(async () => {
  for (const { client, tasks } of opened.splice(0)) {
    await tasks.close();
    await client.close().catch(() => {});
  }
  await sdk.close();
});

async function connect(options: TaskClientOptions = {}): Promise<TaskClient> {
  const client = new Client({ name: "interop", version: "0.0.0" });
  const tasks = new TaskClient(client, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(sdk.url)));
  opened.push({ client, tasks });
  return tasks;
}

describe("interop: TaskClient → SDK experimental-tasks server (Streamable HTTP)", () => {
  it("T-TOOL-3: calls an optional tool as a task, follows it to completed and gets its result", async () => {
    const tasks = await connect();
    const call = await tasks.callTool("sleep", { ms: 120 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const statuses: string[] = [];
    for await (const task of call.task.updates()) statuses.push(task.status);
    expect(statuses.at(-1)).toBe("completed");
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "slept 120 ms" }] });
  });

  it('T-TOOL-4: a "required" tool of the SDK server is called as a task without asking', async () => {
    const tasks = await connect({ elicit: async () => ({ action: "decline" }) });
    const call = await tasks.callTool("ask", { question: "?" });
    expect(call.kind).toBe("task");
  });

  it("T-INPUT-3: on input_required it calls tasks/result; the SDK server delivers its queued elicitation there and the task completes with the answer", async () => {
    const asked: (string | null)[] = [];
    const tasks = await connect({
      elicit: async (params, info) => {
        asked.push(info.relatedTaskId);
        return { action: "accept", content: { answer: `42 (${params.message})` } };
      },
    });
    const call = await tasks.callTool("ask", { question: "meaning?" });
    if (call.kind !== "task") throw new Error("expected a task");
    const statuses: string[] = [];
    for await (const task of call.task.updates()) statuses.push(task.status);
    expect(statuses).toContain("completed");
    expect(asked).toEqual([call.task.id]);
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: 42 (meaning?)" }] });
  });

  it("T-LIFE-4: an isError result of the SDK server's failed task is handed over as the outcome", async () => {
    const tasks = await connect();
    const call = await tasks.callTool("fail", { message: "nope" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(await call.task.outcome()).toMatchObject({ status: "failed", result: { isError: true } });
  });

  it("T-LIST-3 / T-CANCEL-1: lists the session's tasks and cancels one", async () => {
    const tasks = await connect();
    const call = await tasks.callTool("sleep", { ms: 60_000 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(listed).toContain(call.task.id);
    expect((await call.task.cancel()).status).toBe("cancelled");
    expect((await call.task.status()).status).toBe("cancelled");
  });

  it("the SDK server binds tasks to the session: another session does not find the task (why the CLI keeps its session per target)", async () => {
    const tasks = await connect();
    const call = await tasks.callTool("sleep", { ms: 60_000 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const other = await connect();
    await expect(other.resume(call.task.id)).rejects.toMatchObject({ code: -32602 });
  });
});
