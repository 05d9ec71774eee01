import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ListToolsResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { RpcCode } from "../../../core/errors.js";
import { ConnectionError } from "../requestor-errors.js";
import { NO_TIMEOUT_MS, peerOf, type TaskPeer } from "./peer.js";
import { toolTask } from "./tool-task.js";
import { declaresTaskSupport, immediateResponseOf, readCreatedTask, readWireTask, type WireTask } from "../../wire/rev2025-11-25/wire.js";
import type { TaskSupport } from "../../tool-definition.js";
import type { EraCall, EraCallOptions, EraFeatures, HandleOptions, RequestorEra, ToolTask } from "../requestor-era.js";
import { decideTaskCall } from "../task-support.js";
import { readInitializeCapabilities } from "./initialize-capabilities.js";

const AnyObject = z.record(z.string(), z.unknown());
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** 2025-11-25: sessions, the client's choice of task (T-TOOL), `tasks/list`, a blocking `tasks/result` stream. */
export const REV_2025_11_25_FEATURES: EraFeatures = {
  canList: true,
  sendsTtl: true,
  sessions: true,
  serverDecidesTasks: false,
  streamsResult: true,
  clientHostedTasks: true,
};

/**
 * The 2025-11-25 requestor on an SDK `Client` (a session opened by `initialize`): the client
 * decides which calls are tasks (`params.task`, T-TOOL), follows them with `tasks/get`, collects
 * them with `tasks/result` (whose stream carries their questions, T-INPUT-3), lists them.
 */
export class Rev20251125Requestor implements RequestorEra {
  readonly revision = "2025-11-25" as const;
  readonly features = REV_2025_11_25_FEATURES;
  private readonly peer: TaskPeer;
  private toolSupport: Map<string, TaskSupport> | null = null;

  /** The capabilities as the server sent them at initialize (see initialize-capabilities.ts); null before. */
  private sentCapabilities: Record<string, unknown> | null = null;

  constructor(client: Client, serverCapabilities?: unknown) {
    this.peer = peerOf(client, serverCapabilities !== undefined ? { capabilities: serverCapabilities } : {});
    if (isObject(serverCapabilities)) this.sentCapabilities = serverCapabilities;
    readInitializeCapabilities(client, (capabilities) => (this.sentCapabilities = capabilities));
  }

  /** SEP-3182: the server declared `capabilities.tools.idempotency` at initialize. */
  async honoursKeys(): Promise<boolean> {
    const tools = this.sentCapabilities?.["tools"];
    return isObject(tools) && isObject(tools["idempotency"]);
  }

  async createsTask(name: string, options: EraCallOptions): Promise<boolean> {
    const serverSupportsTasks = this.serverSupportsToolTasks;
    const support = serverSupportsTasks ? await this.taskSupportOf(name) : "forbidden";
    if (support === null) return false;
    try {
      return decideTaskCall({ tool: name, serverSupportsTasks, support, wanted: options.task });
    } catch {
      // Refused locally: callTool says why, and nothing is sent.
      return false;
    }
  }

  /** Whether the server declared `tasks.requests.tools.call` (T-CAP-3, T-TOOL-1). */
  get serverSupportsToolTasks(): boolean {
    return declaresTaskSupport(this.peer.capabilities(), "tools/call");
  }

  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.peer.request("tools/list", cursor === undefined ? {} : { cursor }, ListToolsResultSchema);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const support = new Map<string, TaskSupport>();
    for (const t of tools) {
      const declared = t.execution?.taskSupport;
      support.set(t.name, declared === "optional" || declared === "required" ? declared : "forbidden");
    }
    this.toolSupport = support;
    return tools;
  }

  /** A tool's `execution.taskSupport` from `tools/list` (cached; "forbidden" when absent, T-TOOL-2). Null for an unknown tool. */
  async taskSupportOf(tool: string, options: { refresh?: boolean } = {}): Promise<TaskSupport | null> {
    if (!this.toolSupport || options.refresh) await this.listTools();
    return this.toolSupport?.get(tool) ?? null;
  }

  async callTool(name: string, args: Record<string, unknown>, options: EraCallOptions): Promise<EraCall> {
    const serverSupportsTasks = this.serverSupportsToolTasks;
    const support = serverSupportsTasks ? await this.taskSupportOf(name) : "forbidden";
    // An unknown tool goes out plainly: the server's own error ("Unknown tool") says it best.
    const asTask = support === null ? false : decideTaskCall({ tool: name, serverSupportsTasks, support, wanted: options.task });
    const common = {
      ...(options.signal !== undefined && { signal: options.signal }),
      ...(options.onProgress !== undefined && { onprogress: options.onProgress }),
    };
    const key = options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {};
    if (!asTask) {
      const result = await this.peer.request("tools/call", { name, arguments: args, ...key }, CallToolResultSchema, {
        ...common,
        timeout: NO_TIMEOUT_MS,
      });
      return { kind: "result", result };
    }
    const task = { ...(options.ttl !== undefined && { ttl: options.ttl }) };
    const answer = await this.peer.request("tools/call", { name, arguments: args, task, ...key }, AnyObject, common);
    const created = readCreatedTask(answer);
    if (!created) {
      // The server ran it normally (T-NEW-4: task metadata ignored): that is the result.
      const plain = CallToolResultSchema.safeParse(answer);
      if (!plain.success)
        throw new ConnectionError(
          "The server answered tools/call with neither a CreateTaskResult nor a CallToolResult",
          RpcCode.InternalError,
        );
      return { kind: "result", result: plain.data };
    }
    const immediateResponse = immediateResponseOf(answer);
    return { kind: "task", created, ...(immediateResponse !== undefined && { immediateResponse }) };
  }

  task(taskId: string, options: HandleOptions): ToolTask {
    return toolTask(this.peer, taskId, {
      answerInput: options.answerInput,
      onLifecycle: options.onLifecycle,
      ...(options.initial !== undefined && { initial: options.initial }),
      ...(options.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: options.defaultPollIntervalMs }),
    });
  }

  /** Walks `tasks/list` pages; cursors are passed back untouched (T-LIST-3). */
  async *list(options: { signal?: AbortSignal }): AsyncGenerator<WireTask, void, undefined> {
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

  async close(): Promise<void> {}
}
