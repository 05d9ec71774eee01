import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpError, type ElicitResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskClient, type TaskClientOptions } from "../../src/client/task-client.js";
import registerAsTaskTools from "../support/as-task-tools.js";
import { deferred, RELATED_TASK } from "../support/conformance.js";
import { taskClientFixture, tapTransport, type TaskClientFixture, type WireLog } from "../support/task-client-fixture.js";
import { ANONYMOUS_CALLER } from "../../src/core/caller.js";

const AnyResult = z.record(z.string(), z.unknown());
type Msg = JSONRPCMessage & {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
};
const msgs = (list: JSONRPCMessage[]) => list as Msg[];
const byMethod = (list: JSONRPCMessage[], method: string) => msgs(list).filter((m) => m.method === method);

const form = {
  mode: "form" as const,
  message: "Colour?",
  requestedSchema: { type: "object" as const, properties: { answer: { type: "string" as const } } },
};

let fx: TaskClientFixture | null = null;
let raw: { server: Server; client: Client; tasks: TaskClient; wire: WireLog } | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
  if (raw) {
    await raw.tasks.close();
    await raw.client.close();
    await raw.server.close();
    raw = null;
  }
});

/** A bare SDK Server talking to a TaskClient-equipped Client: the server drives the client's receiver directly. */
async function rawPair(options: TaskClientOptions) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name: "raw", version: "0.0.0" }, { capabilities: {} });
  await server.connect(serverSide);
  const client = new Client({ name: "receiver", version: "0.0.0" });
  const tasks = new TaskClient(client, options);
  const wire = tapTransport(clientSide);
  await client.connect(clientSide);
  raw = { server, client, tasks, wire };
  return raw;
}

describe("client-hosted tasks: capabilities (T-CAP-1, T-CAP-2)", () => {
  it("T-CAP-2: a client hosting tasks declares tasks.list, tasks.cancel and tasks.requests for the methods it answers", async () => {
    const { server } = await rawPair({
      elicit: async () => ({ action: "decline" }),
      sample: async () => ({ role: "assistant", content: { type: "text", text: "x" }, model: "m" }),
      hostTasks: true,
    });
    expect(server.getClientCapabilities()).toMatchObject({
      elicitation: { form: {} },
      sampling: {},
      tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } },
    });
  });

  it("T-CAP-1, T-CAP-4: a TaskClient that hosts no tasks declares an empty tasks capability — task-aware, no request type augmentable — so the server serves it tasks, not the fallback", async () => {
    const { server } = await rawPair({ elicit: async () => ({ action: "decline" }) });
    expect(server.getClientCapabilities()?.tasks).toEqual({});
  });
});

describe("client-hosted tasks: the client as receiver (same engine: lifecycle, result, list, cancel)", () => {
  it("T-NEW-2: a task-augmented elicitation/create is answered with a CreateTaskResult, and tasks/result then blocks until the user answers (T-RES-3)", async () => {
    const answer = deferred<ElicitResult>();
    const { server } = await rawPair({ elicit: () => answer.promise, hostTasks: true });
    const created = await server.request({ method: "elicitation/create", params: { ...form, task: { ttl: 60_000 } } }, AnyResult);
    const task = created["task"] as { taskId: string; status: string; ttl: number };
    expect(task).toMatchObject({ status: "working", ttl: 60_000 });
    let settled = false;
    const result = server
      .request({ method: "tasks/result", params: { taskId: task.taskId } } as never, AnyResult)
      .finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    answer.resolve({ action: "accept", content: { answer: "blue" } });
    expect(await result).toMatchObject({
      action: "accept",
      content: { answer: "blue" },
      _meta: { [RELATED_TASK]: { taskId: task.taskId } },
    });
    const got = await server.request({ method: "tasks/get", params: { taskId: task.taskId } } as never, AnyResult);
    expect(got).toMatchObject({ taskId: task.taskId, status: "completed" });
  });

  it("T-LIST-1: tasks/list on the client lists its hosted tasks", async () => {
    const { server } = await rawPair({ elicit: async () => ({ action: "decline" }), hostTasks: true });
    const a = await server.request({ method: "elicitation/create", params: { ...form, task: {} } }, AnyResult);
    const listed = await server.request({ method: "tasks/list", params: {} } as never, AnyResult);
    expect((listed["tasks"] as { taskId: string }[]).map((t) => t.taskId)).toContain((a["task"] as { taskId: string }).taskId);
  });

  it("T-CANCEL-3: tasks/cancel on the client cancels its hosted task and aborts the handler; tasks/result then answers -32800", async () => {
    const aborted = deferred<unknown>();
    const { server } = await rawPair({
      elicit: (_params, info) =>
        new Promise<ElicitResult>(() => info.signal.addEventListener("abort", () => aborted.resolve(info.signal.reason), { once: true })),
      hostTasks: true,
    });
    const created = await server.request({ method: "elicitation/create", params: { ...form, task: {} } }, AnyResult);
    const taskId = (created["task"] as { taskId: string }).taskId;
    await new Promise((r) => setTimeout(r, 20));
    const cancelled = await server.request({ method: "tasks/cancel", params: { taskId } } as never, AnyResult);
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    expect(await aborted.promise).toBe("cancelled");
    const error = await server.request({ method: "tasks/result", params: { taskId } } as never, AnyResult).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32800);
  });

  it("T-ERR-1: tasks/get on the client for an unknown task id is -32602", async () => {
    const { server } = await rawPair({ elicit: async () => ({ action: "decline" }), hostTasks: true });
    const error = await server.request({ method: "tasks/get", params: { taskId: "nope" } } as never, AnyResult).catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
  });

  it("T-NEW-4: a client that does not host tasks processes a task-augmented elicitation normally, ignoring the task metadata", async () => {
    const { server } = await rawPair({ elicit: async () => ({ action: "accept", content: { answer: "plain" } }) });
    const answer = await server.request({ method: "elicitation/create", params: { ...form, task: {} } }, AnyResult);
    expect(answer).toEqual({ action: "accept", content: { answer: "plain" } });
  });

  it("bad input: a malformed elicitation request is answered -32602 with the reason, not a crash", async () => {
    const { server } = await rawPair({ elicit: async () => ({ action: "decline" }), hostTasks: true });
    const error = await server
      .request({ method: "elicitation/create", params: { mode: "form", message: 42 } } as never, AnyResult)
      .catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain("Invalid elicitation request");
  });

  it("a server's first request (JSON-RPC id 0) withdrawn with notifications/cancelled aborts the handler (SDK quirk worked around)", async () => {
    const aborted = deferred<void>();
    const { server } = await rawPair({
      elicit: (_params, info) =>
        new Promise<ElicitResult>(() => info.signal.addEventListener("abort", () => aborted.resolve(), { once: true })),
    });
    const controller = new AbortController();
    const pending = server
      .request({ method: "elicitation/create", params: form }, AnyResult, { signal: controller.signal })
      .catch(() => {});
    await new Promise((r) => setTimeout(r, 20));
    expect(msgs(raw!.wire.received).find((m) => m.method === "elicitation/create")?.id).toBe(0);
    controller.abort("withdrawn");
    await aborted.promise;
    await pending;
  });
});

describe("server as requestor: ctx.elicit/sample(…, { asTask: true })", () => {
  const answering = (info: { taskIds: (string | null)[]; related: (string | null)[] }): TaskClientOptions => ({
    hostTasks: true,
    elicit: async (_params, i) => {
      info.taskIds.push(i.taskId);
      info.related.push(i.relatedTaskId);
      return { action: "accept", content: { answer: "blue" } };
    },
    sample: async (params) => ({
      role: "assistant",
      content: { type: "text", text: `echo ${JSON.stringify(params.messages[0]?.content)}` },
      model: "human",
    }),
  });

  it("T-CAP-3: inside a tool task, the elicitation goes task-augmented (with related-task _meta, T-INPUT-2), is polled to its end, and the tool gets the answer — no deadlock in a party that is requestor and receiver at once", async () => {
    const info = { taskIds: [] as (string | null)[], related: [] as (string | null)[] };
    fx = await taskClientFixture(answering(info), { setup: registerAsTaskTools });
    const call = await fx.tasks.callTool("ask_as_task", { question: "Colour?" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: blue" }] });
    const elicitation = byMethod(fx.wire.received, "elicitation/create")[0];
    expect(elicitation?.params?.["task"]).toEqual({});
    expect(elicitation?.params?._meta?.[RELATED_TASK]).toEqual({ taskId: call.task.id });
    const createResponse = msgs(fx.wire.sent).find((m) => m.id === elicitation?.id && m.result !== undefined);
    const clientTaskId = (createResponse?.result?.["task"] as { taskId: string }).taskId;
    expect(info.taskIds).toEqual([clientTaskId]);
    expect(info.related).toEqual([call.task.id]);
    // The server followed the client's task with tasks/get or tasks/result, by id only (T-META-2).
    const follow = [...byMethod(fx.wire.received, "tasks/get"), ...byMethod(fx.wire.received, "tasks/result")];
    expect(follow.length).toBeGreaterThan(0);
    expect(follow.every((m) => m.params?.["taskId"] === clientTaskId && m.params?._meta?.[RELATED_TASK] === undefined)).toBe(true);
  });

  it("T-CAP-3: in a plain (non-task) tool call, asTask sends a client-hosted task too", async () => {
    const info = { taskIds: [] as (string | null)[], related: [] as (string | null)[] };
    fx = await taskClientFixture(answering(info), { setup: registerAsTaskTools });
    const call = await fx.tasks.callTool("ask_as_task", { question: "Colour?", ttl: 30_000 });
    expect(call).toMatchObject({ kind: "result", result: { content: [{ type: "text", text: "answer: blue" }] } });
    expect(byMethod(fx.wire.received, "elicitation/create")[0]?.params?.["task"]).toEqual({ ttl: 30_000 });
    expect(info.taskIds[0]).toEqual(expect.any(String));
  });

  it("sampling with asTask runs as a client-hosted task as well", async () => {
    fx = await taskClientFixture(answering({ taskIds: [], related: [] }), { setup: registerAsTaskTools });
    const call = await fx.tasks.callTool("sample_as_task", { prompt: "hi" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: expect.stringContaining("model: echo") }] });
    expect(byMethod(fx.wire.received, "sampling/createMessage")[0]?.params?.["task"]).toEqual({});
  });

  it("T-CAP-3: a client without tasks.requests.elicitation.create gets a plain elicitation (the fallback)", async () => {
    fx = await taskClientFixture(
      { elicit: async () => ({ action: "accept", content: { answer: "plain" } }) },
      { setup: registerAsTaskTools },
    );
    const call = await fx.tasks.callTool("ask_as_task", { question: "Colour?" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: plain" }] });
    expect(byMethod(fx.wire.received, "elicitation/create")[0]?.params?.["task"]).toBeUndefined();
  });

  it("T-CANCEL-3: cancelling the server's task withdraws the question: the client-hosted task is cancelled and its handler aborted", async () => {
    const aborted = deferred<void>();
    const started = deferred<string | null>();
    fx = await taskClientFixture(
      {
        hostTasks: true,
        elicit: (_params, info) =>
          new Promise<ElicitResult>(() => {
            started.resolve(info.taskId);
            info.signal.addEventListener("abort", () => aborted.resolve(), { once: true });
          }),
      },
      { setup: registerAsTaskTools },
    );
    const call = await fx.tasks.callTool("ask_as_task", { question: "Colour?" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const clientTaskId = await started.promise;
    await call.task.cancel();
    await aborted.promise;
    const hosted = await fx.tasks.receiver.engine!.get(clientTaskId, ANONYMOUS_CALLER);
    expect(hosted.status).toBe("cancelled");
  });
});
