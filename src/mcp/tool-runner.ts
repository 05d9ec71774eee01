import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../core/errors.js";
import type { TaskRecord } from "../core/task.js";
import type { RunResult, TaskContext } from "../runtime/task-context.js";
import { checkStructuredContent } from "./tool-output.js";
import { taskToolContext } from "./tool-context.js";
import type { RegisteredTool } from "./tool-definition.js";

/** The stored request of a tools/call task. */
export interface StoredToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** What the tool's `gather` returned before the task was created (2026-07-28 MRTR), when it ran then. */
  gathered?: unknown;
}

/**
 * T-LIFE-4: a result with `isError: true` is a request that did not complete successfully →
 * `failed`, with the result's first text as the diagnostic statusMessage.
 */
export function classifyToolResult(result: CallToolResult): RunResult {
  if (!result.isError) return { value: result };
  const text = result.content.find((c) => c.type === "text");
  const statusMessage =
    text && "text" in text && typeof text.text === "string" && text.text.length > 0 ? text.text : "The tool reported an error";
  return { value: result, failed: true, statusMessage };
}

/**
 * Checks what a handler returned before it is stored or sent: a malformed result, or one whose
 * `structuredContent` does not fit the tool's outputSchema, is an internal error (-32603).
 */
export function validateToolResult(tool: RegisteredTool, value: unknown): CallToolResult {
  const parsed = CallToolResultSchema.safeParse(value);
  if (!parsed.success) throw new TaskError("internal", "The tool returned an invalid result");
  checkStructuredContent(tool, parsed.data);
  return parsed.data;
}

/** Builds the engine's runner for `tools/call` tasks from the registered tools. */
export function toolTaskRunner(tools: ReadonlyMap<string, RegisteredTool>) {
  return async (task: TaskRecord, ctx: TaskContext): Promise<RunResult> => {
    const call = task.request as StoredToolCall;
    const tool = tools.get(call.name);
    if (!tool) throw TaskError.protocol(RpcCode.InvalidParams, `Unknown tool: ${call.name}`);
    const args = tool.definition.input.safeParse(call.arguments ?? {});
    if (!args.success) throw TaskError.protocol(RpcCode.InvalidParams, `Invalid arguments for tool ${call.name}`);
    if (tool.definition.park === false) ctx.keepInMemory();
    const toolCtx = taskToolContext(ctx, task.owner);
    const gather = tool.definition.gather;
    // Gathered before the task existed, or (2025-11-25) asked now, as the task's first questions.
    const gathered = Object.hasOwn(call, "gathered") ? call.gathered : gather ? await gather(args.data, toolCtx) : undefined;
    const result = validateToolResult(tool, await tool.handler(args.data, gather ? { ...toolCtx, gathered } : toolCtx));
    return classifyToolResult(result);
  };
}
