/**
 * The official tasks-extension requestor, @modelcontextprotocol/ext-tasks 0.2.2,
 * on the PostgreSQL cluster: two `serve --workers 0` fronts and a worker process on one schema
 * (as test/cluster/tasks-ext.test.ts starts them). Lifecycle, input through tasks/update and
 * resumeTask, with the task created through one front and followed, answered and resumed through
 * the other — the work always on the worker. And our own TaskClient doing the same.
 */
import type { SerializedTaskReference, TaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TaskClient } from "../../src/client/task-client.js";
import { StatelessConnection } from "../../src/mcp/requestor/rev2026-07-28/stateless-connection.js";
import { Cluster } from "../support/cluster.js";
import { connectRequestor, type Requestor } from "../support/ext-tasks-requestor.js";

let cluster: Cluster;
const open: Requestor[] = [];
const clients: TaskClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 1, concurrency: 4 });
}, 60_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close().catch(() => undefined)));
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await cluster?.stop();
});

const front = (i: number): URL => new URL(String(cluster.urls[i]));

async function requestor(i: number, options: Omit<Parameters<typeof connectRequestor>[1], "endpointId"> = {}): Promise<Requestor> {
  // One endpointId for both fronts: they are one endpoint behind a balancer, so references move between them.
  const connected = await connectRequestor(front(i), { endpointId: "cluster", ...options });
  open.push(connected);
  return connected;
}

function textOf(outcome: TaskOutcome<unknown>): string {
  expect(outcome.status, outcome.status === "failed" ? `failed: ${outcome.error.code} ${outcome.error.message}` : "").toBe("completed");
  const result = (outcome as { result: { content: Array<{ text?: string }> } }).result;
  return String(result.content[0]?.text);
}

describe("cluster: the official requestor (ext-tasks 0.2.2) across fronts", { timeout: 60_000 }, () => {
  it("runs a required task tool to completion through one front: CreateTaskResult, tasks/get polled, the result inline (X-NEW-1, X-GET-4)", async () => {
    const { session } = await requestor(0);
    const execution = await session.callTool("batch", { ms: 500 });
    expect(execution.kind).toBe("task");
    expect(textOf((await execution.settle()).outcome)).toBe("slept 500 ms");
  });

  it("answers an elicitation through tasks/update on the other front; the worker's handler resumes with the answer (X-GET-3, X-UPD-10)", async () => {
    const { session: creator } = await requestor(0);
    const execution = await creator.callTool("ask", { question: "Colour?" });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((ref) => void (reference = ref));
    const asked: unknown[] = [];
    const { session: answerer } = await requestor(1, {
      onInputRequest: async (request) => {
        asked.push(request);
        return { action: "accept", content: { answer: "teal" } } as never;
      },
    });
    const { outcome } = await (await answerer.resumeTask(reference!)).settle();
    expect(textOf(outcome)).toBe("answer: teal");
    expect(asked).toEqual([{ kind: "elicitation", params: expect.objectContaining({ message: "Colour?" }) }]);
  });

  it("resumes a running task by its serialized reference on the other front (resumeTask, X-REQ-3)", async () => {
    const { session } = await requestor(0);
    const execution = await session.callTool("batch", { ms: 2000 });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((ref) => void (reference = ref));
    const { session: other } = await requestor(1);
    expect((await other.task(execution.handle.taskId).snapshot()).status).toBe("working");
    const { outcome } = await (await other.resumeTask(reference!)).settle();
    expect(textOf(outcome)).toBe("slept 2000 ms");
  });

  it("cancels through the other front: the task reads cancelled through the first (X-CANCEL-2)", async () => {
    const { session } = await requestor(0);
    const execution = await session.callTool("batch", { ms: 60_000 });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    const { session: other } = await requestor(1);
    await other.task(execution.handle.taskId).cancel();
    await expect.poll(async () => (await session.task(execution.handle.taskId).snapshot()).status, { timeout: 10_000 }).toBe("cancelled");
  });
});

describe("cluster: our TaskClient under 2026-07-28 across fronts", { timeout: 60_000 }, () => {
  it("creates a task through one front, and answers its question and reads its result through the other", async () => {
    const creator = new TaskClient(new StatelessConnection(front(0)), { elicit: async () => ({ action: "decline" }) });
    clients.push(creator);
    const call = await creator.callTool("ask", { question: "Size?" });
    if (call.kind !== "task") throw new Error(`expected a task, got ${call.kind}`);
    const follower = new TaskClient(new StatelessConnection(front(1)), {
      elicit: async () => ({ action: "accept", content: { answer: "XL" } }),
    });
    clients.push(follower);
    const resumed = await follower.resume(call.task.id);
    const result = await resumed.result();
    expect(result.content[0]).toEqual({ type: "text", text: "answer: XL" });
  });
});
