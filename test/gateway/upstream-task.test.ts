/**
 * The gateway following an upstream task (src/gateway/upstream-task.ts) in process, against a
 * scripted 2025-11-25 task server on the SDK's low-level `Server` over the in-memory transport:
 * what the gateway task shows and ends with while the upstream reports a statusMessage, refuses
 * with `retryAfterMs`, drops the connection, forgets its task, stops answering, or is cancelled.
 * The loop itself is the requestor's (RemoteTask); these pin the gateway's policy around it.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import type { ToolContext } from "../../src/mcp/tool-definition.js";
import { followUpstreamTask, type UpstreamTaskHost } from "../../src/gateway/upstream-task.js";

type Status = "working" | "input_required" | "completed" | "failed" | "cancelled";

interface ScriptedTask {
  status: Status;
  statusMessage?: string;
  pollInterval: number;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
}

const TERMINAL = new Set<Status>(["completed", "failed", "cancelled"]);
/** A JSON-RPC error answer with exactly this message (the SDK's McpError would send its "MCP error N:" prefix along). */
const rpcError = (code: number, message: string, data?: unknown) => Object.assign(new Error(message), { code, data });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A task server whose tasks the test moves by hand; each connection is a fresh SDK `Server` over the same tasks. */
class ScriptedUpstream {
  readonly tasks = new Map<string, ScriptedTask>();
  /** Methods received, in order. */
  readonly received: string[] = [];
  /** The next `tasks/get`s answered with this refusal instead. */
  refusals: { count: number; code: number; retryAfterMs: number } = { count: 0, code: -32029, retryAfterMs: 0 };
  /** `tasks/get` never answers. */
  hang = false;
  /** The pollInterval tasks are created with. */
  pollInterval = 100;
  private next = 0;
  private readonly open = new Set<() => void>();

  /** A new working task. */
  add(): string {
    const taskId = `up-${this.tasks.size + 1}`;
    const now = new Date().toISOString();
    this.tasks.set(taskId, { status: "working", pollInterval: this.pollInterval, createdAt: now, lastUpdatedAt: now });
    return taskId;
  }

  set(taskId: string, patch: Partial<ScriptedTask>): void {
    const task = this.tasks.get(taskId);
    if (!task) throw new Error(`no task ${taskId}`);
    Object.assign(task, patch, { lastUpdatedAt: new Date(Date.now() + this.next++).toISOString() });
  }

  /** The one task created so far, once there is one. */
  async created(): Promise<string> {
    for (let i = 0; i < 200 && this.tasks.size === 0; i++) await sleep(10);
    const [taskId] = this.tasks.keys();
    if (taskId === undefined) throw new Error("no upstream task was created");
    return taskId;
  }

  async connect(): Promise<Client> {
    const server = new Server(
      { name: "scripted-upstream", version: "1.0.0" },
      { capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } } },
    );
    server.setRequestHandler(CallToolRequestSchema, async () => {
      this.received.push("tools/call");
      return { task: this.wire(this.add()) };
    });
    server.setRequestHandler(GetTaskRequestSchema, async (request) => {
      this.received.push("tasks/get");
      if (this.hang) return await new Promise<never>(() => {});
      if (this.refusals.count > 0) {
        this.refusals.count--;
        throw rpcError(this.refusals.code, "Rate limit exceeded (task operations)", { retryAfterMs: this.refusals.retryAfterMs });
      }
      return this.wire(request.params.taskId);
    });
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
      this.received.push("tasks/result");
      const taskId = request.params.taskId;
      this.wire(taskId); // not found is an error at once
      while (!TERMINAL.has(this.tasks.get(taskId)?.status ?? "working")) {
        if (extra.signal.aborted) throw new Error("abandoned");
        await sleep(10);
      }
      const task = this.tasks.get(taskId)!;
      if (task.error) throw rpcError(task.error.code, task.error.message, task.error.data);
      return task.result ?? { content: [] };
    });
    server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
      this.received.push("tasks/cancel");
      this.set(request.params.taskId, { status: "cancelled", statusMessage: "cancelled by the requestor" });
      return this.wire(request.params.taskId);
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "gateway", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    await client.connect(clientSide);
    const close = () => void client.close();
    this.open.add(close);
    client.onclose = () => this.open.delete(close);
    return client;
  }

  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  private wire(taskId: string) {
    const task = this.tasks.get(taskId);
    if (!task) throw rpcError(-32602, "Task not found");
    return {
      taskId,
      status: task.status,
      ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttl: null,
      pollInterval: task.pollInterval,
    };
  }
}

/** The gateway's side of the connection: the current client, replaced when {@link drop} loses it. */
class ScriptedHost implements UpstreamTaskHost {
  readonly name = "scripted-upstream";
  readonly bound: string[] = [];
  private current: Promise<Client>;

  constructor(private readonly upstream: ScriptedUpstream) {
    this.current = upstream.connect();
  }

  client(): Promise<Client> {
    return this.current;
  }

  /** Loses the connection; the next one is already being opened, as a restarted upstream's would be. */
  async drop(): Promise<void> {
    const lost = this.current;
    this.current = this.upstream.connect();
    await (await lost).close();
  }

  attach(): () => void {
    return () => {};
  }

  bindTask(upstreamTaskId: string): () => void {
    this.bound.push(upstreamTaskId);
    return () => {};
  }

  /** A scripted upstream keeps its sessions: only a connection loss, which a creation does not survive. */
  sessionLost(): boolean {
    return false;
  }
}

/** A gateway task's context: what it shows, what it checkpoints, and how it is cancelled. */
function taskContext(checkpoint: Record<string, unknown> = {}) {
  const statusMessages: string[] = [];
  const steps: string[] = [];
  const cancel = new AbortController();
  const refuse = async (): Promise<never> => {
    throw new Error("not asked in these tests");
  };
  const ctx: ToolContext = {
    taskId: "gateway-task",
    owner: null,
    signal: cancel.signal,
    progress: () => {},
    elicit: refuse,
    sample: refuse,
    log: () => {},
    setStatusMessage: async (message) => void statusMessages.push(message),
    can: { elicit: false, sample: false },
    sleep: async () => {},
    waitForEvent: refuse,
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      steps.push(name);
      if (name in checkpoint) return checkpoint[name] as T;
      const value = await fn();
      checkpoint[name] = value;
      return value;
    },
  };
  return { ctx, statusMessages, steps, checkpoint, cancel };
}

const STEP = "upstream task of tools/call render";
const upstreams: ScriptedUpstream[] = [];

function setup(timeoutMs = 2000) {
  const upstream = new ScriptedUpstream();
  upstreams.push(upstream);
  const host = new ScriptedHost(upstream);
  const task = taskContext();
  const follow = (context = task) => followUpstreamTask(host, silentLogger, { name: "render", args: {}, ctx: context.ctx, timeoutMs });
  return { upstream, host, task, follow };
}

afterEach(() => {
  for (const upstream of upstreams.splice(0)) upstream.closeAll();
});

describe("gateway: following an upstream task", { timeout: 20_000 }, () => {
  it("shows the upstream's statusMessage as the gateway task's, checkpoints the upstream task id, and ends with its result", async () => {
    const { upstream, host, task, follow } = setup();
    const result = follow();
    const taskId = await upstream.created();
    upstream.set(taskId, { statusMessage: "frame 1 of 2" });
    await sleep(400);
    upstream.set(taskId, { statusMessage: "frame 2 of 2" });
    await sleep(400);
    upstream.set(taskId, { status: "completed", statusMessage: "done", result: { content: [{ type: "text", text: "rendered" }] } });
    expect(await result).toEqual({ content: [{ type: "text", text: "rendered" }] });
    expect(task.statusMessages).toEqual(["Upstream: frame 1 of 2", "Upstream: frame 2 of 2"]);
    expect(task.checkpoint[STEP]).toEqual({ taskId });
    expect(host.bound).toEqual([taskId]);
  });

  it("a failed upstream result (isError) is the gateway task's result; the upstream's own error is replayed as it is", async () => {
    const failing = setup();
    const result = failing.follow();
    failing.upstream.set(await failing.upstream.created(), {
      status: "failed",
      result: { content: [{ type: "text", text: "no" }], isError: true },
    });
    expect(await result).toEqual({ content: [{ type: "text", text: "no" }], isError: true });

    // Even a code that would mean "later" from a lookup is the task's own outcome here: not waited out.
    const erring = setup();
    const rejected = erring.follow();
    erring.upstream.set(await erring.upstream.created(), {
      status: "failed",
      error: { code: -32029, message: "the tool hit its own quota", data: { retryAfterMs: 60_000 } },
    });
    await expect(rejected).rejects.toMatchObject({ code: -32029, message: "the tool hit its own quota" });
  });

  it("waits out refusals with retryAfterMs (rate limit, unavailable) instead of failing the task", async () => {
    const { upstream, follow } = setup();
    upstream.refusals = { count: 3, code: -32029, retryAfterMs: 300 };
    const started = Date.now();
    const result = follow();
    const taskId = await upstream.created();
    upstream.set(taskId, { status: "completed", result: { content: [{ type: "text", text: "after the wait" }] } });
    expect(await result).toEqual({ content: [{ type: "text", text: "after the wait" }] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(upstream.refusals.count).toBe(0);
  });

  it("fails the task once the upstream refuses more than 10 times in a row", async () => {
    const { upstream, follow } = setup();
    upstream.refusals = { count: 100, code: -32003, retryAfterMs: 5 };
    const result = follow();
    const taskId = await upstream.created();
    await expect(result).rejects.toMatchObject({
      code: -32603,
      message: `The upstream server (scripted-upstream) refused 10 times in a row to say how its task ${taskId} (tools/call render) goes: Rate limit exceeded (task operations)`,
    });
    expect(upstream.received.filter((m) => m === "tasks/get")).toHaveLength(11);
  });

  it("polls no faster than 100 ms whatever pollInterval the upstream suggests", async () => {
    const { upstream, follow } = setup();
    upstream.pollInterval = 1;
    const result = follow();
    const taskId = await upstream.created();
    await sleep(1000);
    upstream.set(taskId, { status: "completed", result: { content: [] } });
    await result;
    const polls = upstream.received.filter((m) => m === "tasks/get").length;
    expect(polls).toBeGreaterThan(3);
    expect(polls).toBeLessThanOrEqual(13);
  });

  it("re-attaches to the same upstream task when the connection is lost, and fails after the 4th loss", async () => {
    const { upstream, host, follow } = setup();
    const result = follow();
    const taskId = await upstream.created();
    await sleep(150);
    await host.drop();
    await sleep(300);
    upstream.set(taskId, { status: "completed", result: { content: [{ type: "text", text: "survived" }] } });
    expect(await result).toEqual({ content: [{ type: "text", text: "survived" }] });
    expect(upstream.received.filter((m) => m === "tools/call")).toHaveLength(1);

    const lossy = setup();
    const failing = lossy.follow();
    const lost = await lossy.upstream.created();
    for (let i = 0; i < 4; i++) {
      await sleep(250);
      await lossy.host.drop();
    }
    await expect(failing).rejects.toMatchObject({
      code: -32603,
      message: `The upstream server (scripted-upstream) closed the connection 4 times while the gateway followed its task ${lost} (tools/call render)`,
    });
  });

  it("says the upstream no longer knows its task when a re-attached follow finds it gone", async () => {
    const { upstream, host, follow } = setup();
    const result = follow();
    const taskId = await upstream.created();
    await sleep(150);
    upstream.tasks.delete(taskId); // restarted without keeping its tasks
    await host.drop();
    await expect(result).rejects.toMatchObject({
      code: -32603,
      message: `The upstream server (scripted-upstream) no longer knows its task ${taskId} (tools/call render): it was restarted without keeping its tasks`,
    });
  });

  it("re-attaches from the checkpoint after a gateway restart: no second upstream task; a lost one is said so", async () => {
    const { upstream, follow } = setup();
    const taskId = upstream.add();
    const restarted = taskContext({ [STEP]: { taskId } });
    const result = follow(restarted);
    await sleep(200);
    upstream.set(taskId, { status: "completed", result: { content: [{ type: "text", text: "once" }] } });
    expect(await result).toEqual({ content: [{ type: "text", text: "once" }] });
    expect(upstream.received).not.toContain("tools/call");

    upstream.tasks.delete(taskId);
    await expect(follow(taskContext({ [STEP]: { taskId } }))).rejects.toMatchObject({
      code: -32603,
      message: `The upstream server (scripted-upstream) no longer knows its task ${taskId} (tools/call render): it was restarted without keeping its tasks`,
    });
  });

  it("fails the task clearly when the upstream stops answering about its task for the timeout", async () => {
    const { upstream, follow } = setup(500);
    const result = follow();
    const taskId = await upstream.created();
    upstream.hang = true;
    await expect(result).rejects.toMatchObject({
      code: -32603,
      message: `The upstream server (scripted-upstream) did not answer about its task ${taskId} (tools/call render) for 500 ms; the gateway stopped following it`,
    });
  });

  it("cancels the upstream task when the gateway task is cancelled", async () => {
    const { upstream, task, follow } = setup();
    const result = follow();
    const taskId = await upstream.created();
    await sleep(150);
    task.cancel.abort(new Error("cancelled by the requestor"));
    await expect(result).rejects.toThrow("cancelled by the requestor");
    for (let i = 0; i < 100 && upstream.tasks.get(taskId)?.status !== "cancelled"; i++) await sleep(10);
    expect(upstream.tasks.get(taskId)?.status).toBe("cancelled");
    expect(upstream.received).toContain("tasks/cancel");
  });
});
