import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ListToolsResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { RpcCode } from "../core/errors.js";
import { ClientReceiver, type ClientReceiverOptions } from "./receiver.js";
import { ConnectionError } from "../mcp/requestor-errors.js";
import { NO_TIMEOUT_MS, peerOf, type TaskPeer } from "../mcp/rev2025-11-25/requestor/peer.js";
import { RemoteTask, type LifecycleEvent } from "../mcp/rev2025-11-25/requestor/remote-task.js";
import type { TaskSupport } from "../mcp/tool-definition.js";
import { declaresTaskSupport, immediateResponseOf, readCreatedTask, readWireTask, type WireTask } from "../mcp/rev2025-11-25/wire.js";
import { silentLogger, type Logger } from "../core/logger.js";
import type { TaskJournal } from "./task-journal.js";
import { decideTaskCall } from "./task-support.js";

/** A tool call running as a task on the server. */
export type ToolTask = RemoteTask<CallToolResult>;

/** What {@link TaskClient.callTool} started: a task to follow, or (a plain call) its result. */
export type ToolCall =
  | { kind: "task"; task: ToolTask; /** T-NEW-3, for a host to hand its model meanwhile. */ immediateResponse?: string }
  | { kind: "result"; result: CallToolResult };

export interface CallToolOptions {
  /**
   * `true`: as a task (refused locally if the server or tool does not allow it); `false`: as a
   * plain call (refused if the tool requires a task); omitted: a task exactly when required.
   */
  task?: boolean;
  /** Requested ttl of the task, ms (T-NEW-1). */
  ttl?: number;
  /** Progress notifications of the call; for a task they keep coming for its whole life (T-PROG-1). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Gives up a plain call (notifications/cancelled) or the creation of a task. */
  signal?: AbortSignal;
}

export interface TaskClientOptions extends ClientReceiverOptions {
  /** Requestor lifecycle log (created, status, result, cancel — T-SEC-5). pino fits. */
  logger?: Logger;
  /** Records the tasks this client creates and what it does with them, e.g. {@link fileJournal}. */
  journal?: TaskJournal;
  /** Written into journal entries: which receiver this client talks to. */
  target?: string;
  /** The server's capabilities, when the connection was resumed without a new initialize. */
  serverCapabilities?: unknown;
  /** Poll interval when a task suggests none. Default 1000 ms. */
  defaultPollIntervalMs?: number;
}

const AnyObject = z.record(z.string(), z.unknown());

/**
 * The requestor side of MCP Tasks on an SDK `Client`: calls tools as tasks where the server allows
 * it, follows, waits for and cancels them, lists them, and re-attaches to them by id after a
 * restart. Also routes the server's elicitation/sampling requests to the application's handlers,
 * and can host them as client-side tasks (`hostTasks`).
 *
 * Create it before `client.connect()`: it declares the client's capabilities.
 */
export class TaskClient {
  readonly client: Client;
  /** Answers the server's requests (and hosts client-side tasks). */
  readonly receiver: ClientReceiver;
  private readonly peer: TaskPeer;
  private readonly options: TaskClientOptions;
  private readonly logger: Logger;
  private readonly handles = new Set<ToolTask>();
  private toolSupport: Map<string, TaskSupport> | null = null;

  constructor(client: Client, options: TaskClientOptions = {}) {
    this.client = client;
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.receiver = new ClientReceiver(client, options);
    this.peer = peerOf(client, options.serverCapabilities !== undefined ? { capabilities: options.serverCapabilities } : {});
  }

  /** Whether the server declared `tasks.requests.tools.call` (T-CAP-3, T-TOOL-1). */
  get serverSupportsToolTasks(): boolean {
    return declaresTaskSupport(this.peer.capabilities(), "tools/call");
  }

  /** A tool's `execution.taskSupport` from `tools/list` (cached; "forbidden" when absent, T-TOOL-2). Null for an unknown tool. */
  async taskSupportOf(tool: string, options: { refresh?: boolean } = {}): Promise<TaskSupport | null> {
    if (!this.toolSupport || options.refresh) {
      const support = new Map<string, TaskSupport>();
      let cursor: string | undefined;
      do {
        const page = await this.peer.request("tools/list", cursor === undefined ? {} : { cursor }, ListToolsResultSchema);
        for (const t of page.tools) {
          const declared = t.execution?.taskSupport;
          support.set(t.name, declared === "optional" || declared === "required" ? declared : "forbidden");
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      this.toolSupport = support;
    }
    return this.toolSupport.get(tool) ?? null;
  }

  /**
   * Calls a tool: as a task where the server allows it and the caller wants it (see
   * {@link CallToolOptions.task}), else plainly. A task is returned at once as a handle; a plain
   * call resolves with its result. Rejects with a RemoteError when the server refuses the call.
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<ToolCall> {
    const serverSupportsTasks = this.serverSupportsToolTasks;
    const support = serverSupportsTasks ? await this.taskSupportOf(name) : "forbidden";
    // An unknown tool goes out plainly: the server's own error ("Unknown tool") says it best.
    const asTask = support === null ? false : decideTaskCall({ tool: name, serverSupportsTasks, support, wanted: options.task });
    const common = {
      ...(options.signal !== undefined && { signal: options.signal }),
      ...(options.onProgress !== undefined && { onprogress: options.onProgress }),
    };
    if (!asTask) {
      const result = await this.peer.request("tools/call", { name, arguments: args }, CallToolResultSchema, { ...common, timeout: NO_TIMEOUT_MS });
      return { kind: "result", result };
    }
    const task = { ...(options.ttl !== undefined && { ttl: options.ttl }) };
    const answer = await this.peer.request("tools/call", { name, arguments: args, task }, AnyObject, common);
    const created = readCreatedTask(answer);
    if (!created) {
      // The server ran it normally (T-NEW-4: task metadata ignored): that is the result.
      const plain = CallToolResultSchema.safeParse(answer);
      if (!plain.success) throw new ConnectionError("The server answered tools/call with neither a CreateTaskResult nor a CallToolResult", RpcCode.InternalError);
      return { kind: "result", result: plain.data };
    }
    this.record({ type: "created", taskId: created.taskId, name, status: created.status, ttl: created.ttl });
    const handle = this.handle(created.taskId, created);
    const immediateResponse = immediateResponseOf(answer);
    return { kind: "task", task: handle, ...(immediateResponse !== undefined && { immediateResponse }) };
  }

  /** A handle on a task by id, without checking it exists (see {@link resume}). */
  task(taskId: string): ToolTask {
    return this.handle(taskId);
  }

  /**
   * Re-attaches to a task after the requestor restarted or reconnected (a new session): checks it
   * with `tasks/get` and returns its handle. Rejects with a RemoteError (-32602) when the server
   * does not know it (never existed, expired, another owner's).
   */
  async resume(taskId: string): Promise<ToolTask> {
    const handle = this.handle(taskId);
    try {
      await handle.status();
    } catch (error) {
      this.forget(handle);
      throw error;
    }
    this.record({ type: "resumed", taskId });
    return handle;
  }

  /** `tasks/get`. */
  async get(taskId: string): Promise<WireTask> {
    const handle = this.handle(taskId, undefined, false);
    try {
      return await handle.status();
    } finally {
      this.forget(handle);
    }
  }

  /** `tasks/cancel` (T-CANCEL-5: fetch what you need first — the server may drop a cancelled task). */
  async cancel(taskId: string): Promise<WireTask> {
    const handle = this.handle(taskId, undefined, false);
    try {
      return await handle.cancel();
    } finally {
      this.forget(handle);
    }
  }

  /** Every task the server lets this client see, walking `tasks/list` pages; cursors are passed back untouched (T-LIST-3). */
  async *list(options: { signal?: AbortSignal } = {}): AsyncGenerator<WireTask, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.peer.request("tasks/list", cursor === undefined ? {} : { cursor }, AnyObject, {
        ...(options.signal !== undefined && { signal: options.signal }),
      });
      const tasks = Array.isArray(page["tasks"]) ? page["tasks"] : [];
      for (const raw of tasks) {
        const task = readWireTask(raw);
        if (task) yield task;
      }
      const next = page["nextCursor"];
      cursor = typeof next === "string" ? next : undefined;
    } while (cursor !== undefined);
  }

  /** Disposes every handle and stops the client-hosted task engine. Does not close the SDK client. */
  async close(): Promise<void> {
    for (const handle of [...this.handles]) handle.dispose();
    this.handles.clear();
    await this.receiver.close();
  }

  private handle(taskId: string, initial?: WireTask, answerInput = true): ToolTask {
    const handle: ToolTask = new RemoteTask(taskId, {
      peer: this.peer,
      answerInput,
      resultSchema: CallToolResultSchema,
      isFailure: (result) => result.isError === true, // T-LIFE-4
      onLifecycle: (event) => {
        this.record(event);
        // Once the outcome is in, close() has nothing left to stop on this handle.
        if (event.type === "result") this.handles.delete(handle);
      },
      ...(initial !== undefined && { initial }),
      ...(this.options.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: this.options.defaultPollIntervalMs }),
    });
    this.handles.add(handle);
    return handle;
  }

  private forget(handle: ToolTask): void {
    handle.dispose();
    this.handles.delete(handle);
  }

  /** T-SEC-5 (requestor): log the lifecycle event and journal it. */
  private record(event: LifecycleEvent | { type: "created"; taskId: string; name: string; status: string; ttl: number | null } | { type: "resumed"; taskId: string }): void {
    const { type, ...fields } = event;
    this.logger.info({ requestor: type, ...fields }, `task ${type}`);
    const journal = this.options.journal;
    if (!journal) return;
    const entry = {
      at: new Date().toISOString(),
      op: type,
      ...fields,
      ...(this.options.target !== undefined && { target: this.options.target }),
    };
    journal.record(entry).catch((error: unknown) => this.logger.warn({ err: error }, "could not write the task journal"));
  }
}
