import type { McpServer, RegisteredTool as SdkRegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { normalizeObjectSchema, safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { TaskError } from "../../core/errors.js";
import type { RegisteredTool, TaskSupport } from "../tool-definition.js";
import { creatingRequest } from "./creating-request.js";
import { runningTask } from "./running-task.js";
import { registeredToolsOf } from "./sdk-internals.js";
import { sdkTaskExtra } from "./task-extra.js";

/** How one tool of an SDK McpServer runs as a task. */
export interface SdkToolTasks {
  /** "optional": a call with `params.task` runs as a task, one without runs as the SDK runs it; "required": only as a task (T-TOOL-4). */
  taskSupport: Exclude<TaskSupport, "forbidden">;
  /** The callback may safely run again from the start after a crash (re-run instead of failed on restart). */
  retryable?: boolean;
  /** Text for the CreateTaskResult's model-immediate-response `_meta` (T-NEW-3). */
  immediateResponse?: string;
}

/**
 * One of the McpServer's tools as our RegisteredTool, so tools/call, the engine's runner and
 * every era handler use it as they use a TaskServer tool. The SDK's record is looked up at each
 * use, so `update()` (new callback or schema), `disable()` and `remove()` count.
 */
export function sdkToolAsTaskTool(mcpServer: McpServer, name: string, how: SdkToolTasks): RegisteredTool {
  const current = (): SdkRegisteredTool => {
    const tool = registeredToolsOf(mcpServer)[name];
    if (!tool?.enabled) throw TaskError.invalidParams(`Unknown tool: ${name}`);
    return tool;
  };
  // The SDK's own validation (zod 3 or 4, a raw shape or a schema); no schema takes anything.
  const input = {
    safeParse(value: unknown) {
      const schema = current().inputSchema;
      if (schema === undefined) return { success: true, data: value };
      return safeParse(normalizeObjectSchema(schema) ?? schema, value);
    },
  } as unknown as z.ZodType;
  return {
    name,
    definition: {
      input,
      taskSupport: how.taskSupport,
      ...(how.retryable !== undefined && { retryable: how.retryable }),
      ...(how.immediateResponse !== undefined && { immediateResponse: how.immediateResponse }),
    },
    async handler(args, ctx) {
      const tool = current();
      if (ctx.taskId === null) throw new Error(`SDK tool ${name} runs through the SDK when not a task`);
      const extra = sdkTaskExtra({ ...ctx, taskId: ctx.taskId }, creatingRequest(), runningTask()?.origin.progressToken ?? null);
      try {
        const callback = tool.handler as unknown as (...a: unknown[]) => CallToolResult | Promise<CallToolResult>;
        return await (tool.inputSchema === undefined ? callback(extra) : callback(args, extra));
      } catch (error) {
        return asToolError(error);
      }
    },
  };
}

/**
 * What the SDK's McpServer makes of a callback's throw on a plain call — a tool result with
 * `isError` (the task then fails with that text as its statusMessage, T-LIFE-4) — except a
 * URL-elicitation-required error, which it passes through as a JSON-RPC error.
 */
function asToolError(error: unknown): CallToolResult {
  if (error instanceof McpError && error.code === ErrorCode.UrlElicitationRequired) throw error;
  return { content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }], isError: true };
}
