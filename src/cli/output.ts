import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { RemoteTaskInfo, TaskOutcome } from "../mcp/requestor/remote-task-info.js";
import { RpcCode, toRpcError } from "../core/errors.js";
import { ExitCode } from "./exit-codes.js";

/** Where a command writes: results to stdout, everything for humans to stderr. */
export interface Output {
  json: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** A tool result as text: text content as is, other content summarized; structuredContent when nothing else. */
export function renderToolResult(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === "text") parts.push(item.text);
    else if (item.type === "image" || item.type === "audio")
      parts.push(`[${item.type}: ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes]`);
    else if (item.type === "resource_link") parts.push(`[resource: ${item.uri}]`);
    else if (item.type === "resource") parts.push("text" in item.resource ? item.resource.text : `[resource: ${item.resource.uri}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  return parts.join("\n");
}

/** Prints how a call or task ended and returns the exit code for it; under --json, `"task": null` says no task was made of the call. */
export function printOutcome(out: Output, taskId: string | null, outcome: TaskOutcome<CallToolResult>): number {
  if (out.json) {
    const body =
      "result" in outcome
        ? { ...(taskId ? { taskId } : { task: null }), status: outcome.status, result: outcome.result }
        : { ...(taskId ? { taskId } : { task: null }), status: outcome.status, error: errorJson(outcome.error) };
    out.stdout.write(`${JSON.stringify(body)}\n`);
  } else if ("result" in outcome) {
    const text = renderToolResult(outcome.result);
    if (text) out.stdout.write(`${text}\n`);
    if (outcome.status === "failed") out.stderr.write("The tool reported an error (isError).\n");
  } else if (outcome.status === "cancelled") {
    out.stderr.write(`${outcome.error.message}\n`);
  } else {
    // Said as every other error that ends a command is (printError), whichever path it came by.
    out.stderr.write(`mcp-tasks: error ${outcome.error.code}: ${outcome.error.message}\n`);
  }
  if (outcome.status === "completed") return ExitCode.Ok;
  return outcome.status === "cancelled" ? ExitCode.Cancelled : ExitCode.Failed;
}

/**
 * What the command knew of the task the error is about (for an expiry: its ttl, when seen). A
 * command about a task (`call`, `tasks get|result|cancel`) gives `taskId` — null when no task is
 * known, a creation refused or never sent — so its `--json` error keeps its documented shape.
 */
export interface ErrorContext {
  taskId?: string | null;
  /** The task's last status the command saw, for `--json` (null or absent: none seen). */
  status?: string | null;
  ttl?: number | null;
  /** The caller knows the task expired (a "not found" past the ttl the journal recorded). */
  expired?: boolean;
}

/**
 * Prints an error that ended a command (JSON on stdout under --json, else a line on stderr). A
 * task past its ttl (T-ERR-7) says so instead of reading like a failed lookup; under --json it is
 * `{taskId, status: "expired", ttl?, error}` with the server's error as sent, and any other error
 * of a command about a task `{taskId, status, error}`: the task's id and the last status the
 * command saw, each null when not known (a refused creation, an unreachable server).
 */
export function printError(out: Output, error: unknown, context: ErrorContext = {}): void {
  const expired = context.expired === true || isExpiry(error);
  if (out.json) {
    const aboutTask = context.taskId !== undefined;
    const body = expired
      ? {
          ...(context.taskId && { taskId: context.taskId }),
          status: "expired",
          ...(typeof context.ttl === "number" && { ttl: context.ttl }),
          error: errorJson(error),
        }
      : { ...(aboutTask && { taskId: context.taskId, status: context.status ?? null }), error: errorJson(error) };
    out.stdout.write(`${JSON.stringify(body)}\n`);
  } else if (expired) {
    const ttl = typeof context.ttl === "number" ? `its ttl of ${context.ttl} ms` : "its ttl";
    out.stderr.write(`mcp-tasks: the task ${context.taskId ? `${context.taskId} ` : ""}expired (${ttl} ran out)\n`);
  } else {
    out.stderr.write(`mcp-tasks: ${describe(error)}\n`);
  }
}

/**
 * The receiver's answer about a task past its ttl: -32602 with "expired" in the message (T-ERR-7
 * gives the code, not the words; ours and the SDK's say "Task has expired"). Once swept, the task
 * is "not found", which cannot be told from a wrong id.
 */
function isExpiry(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === "RemoteError" &&
    (error as { code?: unknown }).code === RpcCode.InvalidParams &&
    /\bexpired\b/i.test(error.message)
  );
}

export function printTask(out: Output, task: RemoteTaskInfo): void {
  if (out.json) {
    out.stdout.write(`${JSON.stringify(task)}\n`);
    return;
  }
  const lines = [
    `taskId:        ${task.taskId}`,
    `status:        ${task.status}`,
    ...(task.statusMessage !== undefined ? [`statusMessage: ${task.statusMessage}`] : []),
    `createdAt:     ${task.createdAt}`,
    `lastUpdatedAt: ${task.lastUpdatedAt}`,
    `ttl:           ${task.ttl === null ? "unlimited" : `${task.ttl} ms`}`,
    ...(task.pollInterval !== undefined ? [`pollInterval:  ${task.pollInterval} ms`] : []),
  ];
  out.stdout.write(`${lines.join("\n")}\n`);
}

/** A JSON-RPC error as such; anything else (a local failure of the CLI itself) by its message alone. */
function errorJson(error: unknown): { code?: number; message: string; data?: unknown } {
  const { body, known } = toRpcError(error);
  return known ? body : { message: describe(error) };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    // A JSON-RPC error by its code: the receiver's, or the one a refused input request stands for.
    return typeof code === "number" && (error.name === "RemoteError" || error.name === "InputRefusedError")
      ? `error ${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}
