/**
 * Helpers of the spec conformance suite (test/conformance): raw `tasks/*` requests through a
 * requestor (the real SDK client, or the plain-JSON client), JSON-RPC error assertions, and
 * event-driven waits (no sleeps).
 */
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";
import type { TaskSupport, ToolContext } from "../../src/mcp/tool-definition.js";
import type { Logger } from "../../src/core/logger.js";
import type { Traffic } from "./in-memory-fixture.js";
import type { Requestor } from "./plain-json-client.js";

export const RELATED_TASK = "io.modelcontextprotocol/related-task";
export const MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";
/** ISO 8601 date-time with a UTC designator or offset (T-TTL-1/2). */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Accepts any result object, unknown keys kept. */
export const AnyResultSchema = z.looseObject({});

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Tracks whether a promise has settled, without ever rejecting unhandled. */
export function track<T>(promise: Promise<T>): { promise: Promise<T>; settled(): boolean } {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return { promise, settled: () => done };
}

// ---- raw requests ---------------------------------------------------------------------------

export function callToolAsTask(
  client: Requestor,
  name: string,
  args: Record<string, unknown>,
  task: Record<string, unknown> = {},
  options?: RequestOptions,
) {
  return client.request({ method: "tools/call", params: { name, arguments: args, task } }, CreateTaskResultSchema, options);
}

export function callTool(client: Requestor, name: string, args: Record<string, unknown>, options?: RequestOptions) {
  return client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, options);
}

export function getTask(client: Requestor, taskId: string) {
  return client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema);
}

export function taskResult(client: Requestor, taskId: string) {
  return client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema);
}

export function cancelTask(client: Requestor, taskId: string) {
  return client.request({ method: "tasks/cancel", params: { taskId } }, CancelTaskResultSchema);
}

export function listTasks(client: Requestor, cursor?: unknown) {
  return client.request({ method: "tasks/list", params: cursor === undefined ? {} : { cursor } }, ListTasksResultSchema);
}

/** Every task of the caller, walking all pages of tasks/list. */
export async function listAllTasks(client: Requestor) {
  const tasks = [];
  let cursor: string | undefined;
  do {
    const page = await listTasks(client, cursor);
    tasks.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tasks;
}

// ---- JSON-RPC errors ------------------------------------------------------------------------

/** Awaits a request that must fail with a JSON-RPC error and returns that error. */
export async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error(`expected a JSON-RPC error, got a result: ${JSON.stringify(result)}`);
}

/** The error message as the server sent it (the SDK client prefixes "MCP error <code>: " once). */
export function wireMessage(error: McpError): string {
  const prefix = `MCP error ${error.code}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** Asserts the request fails with `code` and, when given, a message equal to / matching `message`. */
export async function expectRpcError(promise: Promise<unknown>, code: number, message?: string | RegExp): Promise<McpError> {
  const error = await rpcError(promise);
  expect(error.code).toBe(code);
  if (typeof message === "string") expect(wireMessage(error)).toBe(message);
  else if (message) expect(wireMessage(error)).toMatch(message);
  return error;
}

// ---- the wire log ---------------------------------------------------------------------------

type WireRequest = { jsonrpc: "2.0"; id: string | number; method: string; params?: Record<string, unknown> };
type WireResponse = {
  jsonrpc: "2.0";
  id: string | number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};
type WireNotification = { jsonrpc: "2.0"; method: string; params?: Record<string, unknown> };

export function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & WireRequest {
  return "method" in message && "id" in message;
}

export function isNotification(message: JSONRPCMessage): message is JSONRPCMessage & WireNotification {
  return "method" in message && !("id" in message);
}

export function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & WireResponse {
  return !("method" in message) && "id" in message;
}

/** The last request the client sent with `method` (and matching `where`), and the server's response to it. */
export function exchange(
  traffic: Traffic,
  method: string,
  where: (params: Record<string, unknown>) => boolean = () => true,
): { request: WireRequest; response: WireResponse | undefined; responseIndex: number } {
  const requests = traffic.sent.filter(isRequest).filter((m) => m.method === method && where(m.params ?? {}));
  const request = requests[requests.length - 1];
  if (!request) throw new Error(`no ${method} request was sent`);
  const responseIndex = traffic.received.findIndex((m) => isResponse(m) && m.id === request.id);
  const response = responseIndex < 0 ? undefined : (traffic.received[responseIndex] as WireResponse);
  return { request, response, responseIndex };
}

// ---- event-driven waits ---------------------------------------------------------------------

/** A growing list whose consumers can wait for an item matching a predicate. */
export class Awaitable<T> {
  readonly items: T[] = [];
  private waiters: { match: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(item)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(item);
      }
    }
  }

  /** Resolves with the first item (already seen or future) matching `match`. */
  until(match: (item: T) => boolean): Promise<T> {
    const seen = this.items.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

export type StatusNotification = z.infer<typeof TaskStatusNotificationSchema>["params"];

/** Collects a client's notifications/tasks/status. */
export function watchStatuses(client: Requestor) {
  const seen = new Awaitable<StatusNotification>();
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => seen.push(notification.params));
  return {
    all: seen.items,
    of: (taskId: string) => seen.items.filter((n) => n.taskId === taskId),
    statuses: (taskId: string) => seen.items.filter((n) => n.taskId === taskId).map((n) => n.status),
    until: (taskId: string, status: string) => seen.until((n) => n.taskId === taskId && n.status === status),
  };
}

export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A Logger that records everything, so tests can wait on what the engine did quietly. */
export function captureLogger(): Logger & { entries: LogEntry[]; until(match: (entry: LogEntry) => boolean): Promise<LogEntry> } {
  const log = new Awaitable<LogEntry>();
  const at =
    (level: LogEntry["level"]) =>
    (obj: object, msg?: string): void =>
      log.push({ level, obj: obj as Record<string, unknown>, msg });
  return {
    entries: log.items,
    until: (match) => log.until(match),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
}

// ---- probe tools ----------------------------------------------------------------------------

/**
 * A tool whose handler the test drives: it reports when it starts and when its signal aborts,
 * then waits — ignoring the signal, like a handler that does not cooperate — until the test lets
 * it return a result or throw. One call per probe.
 */
export interface Probe {
  readonly calls: number;
  /** Resolves with the handler's context when it starts. */
  started: Promise<ToolContext>;
  /** Resolves with the signal's reason when the handler's signal aborts. */
  aborted: Promise<unknown>;
  /** Resolves once the handler has returned or thrown. */
  returned: Promise<void>;
  /** Lets the handler return `result` (default: text "done"). */
  finish(result?: CallToolResult): void;
  /** Lets the handler throw `error`. */
  fail(error: unknown): void;
}

export function probeTool(app: TaskServer, name: string, options: { taskSupport?: TaskSupport } = {}): Probe {
  const started = deferred<ToolContext>();
  const aborted = deferred<unknown>();
  const returned = deferred<void>();
  const outcome = deferred<() => CallToolResult>();
  let calls = 0;
  app.tool(name, { input: z.object({}).loose(), taskSupport: options.taskSupport ?? "optional" }, async (_args, ctx) => {
    calls++;
    ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason), { once: true });
    started.resolve(ctx);
    try {
      const produce = await outcome.promise;
      return produce();
    } finally {
      // After the engine had the chance to see the outcome: resolve on a later macrotask.
      setImmediate(() => returned.resolve());
    }
  });
  return {
    get calls() {
      return calls;
    },
    started: started.promise,
    aborted: aborted.promise,
    returned: returned.promise,
    finish: (result = { content: [{ type: "text", text: "done" }] }) => outcome.resolve(() => result),
    fail: (error) =>
      outcome.resolve(() => {
        throw error;
      }),
  };
}
