import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TaskOutcome } from "../mcp/rev2025-11-25/requestor/remote-task.js";
import type { WireTask } from "../mcp/rev2025-11-25/wire.js";
import { toRpcError } from "../core/errors.js";
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
    else if (item.type === "image" || item.type === "audio") parts.push(`[${item.type}: ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes]`);
    else if (item.type === "resource_link") parts.push(`[resource: ${item.uri}]`);
    else if (item.type === "resource") parts.push("text" in item.resource ? item.resource.text : `[resource: ${item.resource.uri}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  return parts.join("\n");
}

/** Prints how a call or task ended and returns the exit code for it. */
export function printOutcome(out: Output, taskId: string | null, outcome: TaskOutcome<CallToolResult>): number {
  if (out.json) {
    const body =
      "result" in outcome
        ? { ...(taskId && { taskId }), status: outcome.status, result: outcome.result }
        : { ...(taskId && { taskId }), status: outcome.status, error: errorJson(outcome.error) };
    out.stdout.write(`${JSON.stringify(body)}\n`);
  } else if ("result" in outcome) {
    const text = renderToolResult(outcome.result);
    if (text) out.stdout.write(`${text}\n`);
    if (outcome.status === "failed") out.stderr.write("The tool reported an error (isError).\n");
  } else if (outcome.status === "cancelled") {
    out.stderr.write(`${outcome.error.message}\n`);
  } else {
    out.stderr.write(`error ${outcome.error.code}: ${outcome.error.message}\n`);
  }
  if (outcome.status === "completed") return ExitCode.Ok;
  return outcome.status === "cancelled" ? ExitCode.Cancelled : ExitCode.Failed;
}

/** Prints an error that ended a command (JSON on stdout under --json, else a line on stderr). */
export function printError(out: Output, error: unknown): void {
  if (out.json) out.stdout.write(`${JSON.stringify({ error: errorJson(error) })}\n`);
  else out.stderr.write(`mcp-tasks: ${describe(error)}\n`);
}

export function printTask(out: Output, task: WireTask): void {
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
    return typeof code === "number" && error.name === "RemoteError" ? `error ${code}: ${error.message}` : error.message;
  }
  return String(error);
}
