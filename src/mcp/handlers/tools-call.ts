import type { CallToolResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../../core/errors.js";
import { toStoredError } from "../../runtime/task-execution.js";
import type { LooseParams } from "../request-schemas.js";
import type { SessionContext } from "../session-context.js";
import { acceptedMethods, plainToolContext } from "../tool-context.js";
import type { RegisteredTool } from "../tool-definition.js";
import { validateToolResult, type StoredToolCall } from "../tool-runner.js";
import { MODEL_IMMEDIATE_RESPONSE_META_KEY, toWireTask } from "../wire.js";

interface CallRequest {
  requestId: RequestId;
  signal: AbortSignal;
  owner: string | null;
}

/**
 * `tools/call`, plain or task-augmented (T-NEW, T-TOOL). Checks happen before anything runs:
 * a forbidden tool called as a task and a required tool called plainly get -32601 and do not run.
 */
export async function toolsCall(session: SessionContext, params: LooseParams, request: CallRequest): Promise<Record<string, unknown>> {
  const name = params?.["name"];
  if (typeof name !== "string" || name.length === 0) throw TaskError.invalidParams("Invalid params: name must be a non-empty string");
  const tool = session.tools.get(name);
  if (!tool) throw TaskError.invalidParams(`Unknown tool: ${name}`);
  const rawArgs = params?.["arguments"] ?? {};
  if (typeof rawArgs !== "object" || rawArgs === null || Array.isArray(rawArgs)) {
    throw TaskError.invalidParams("Invalid params: arguments must be an object");
  }
  const size = Buffer.byteLength(JSON.stringify(rawArgs));
  if (size > session.config.maxArgumentBytes) {
    session.engine.observer.limitRejected("argument_bytes");
    throw TaskError.invalidParams(`Invalid params: arguments are ${size} bytes, more than the limit of ${session.config.maxArgumentBytes}`);
  }
  const args = tool.definition.input.safeParse(rawArgs);
  if (!args.success) {
    const detail = args.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw TaskError.invalidParams(`Invalid arguments for tool ${name}: ${detail}`);
  }
  const support = tool.definition.taskSupport ?? "forbidden";
  // T-NEW-4: with task support off, params.task is ignored and every call runs normally.
  const taskParams = session.config.tasks ? params?.["task"] : undefined;
  if (taskParams !== undefined) {
    if (support === "forbidden") {
      // T-TOOL-2
      throw new TaskError("method_not_found", `Tool ${name} does not support task-augmented calls (execution.taskSupport is "forbidden")`);
    }
    if (typeof taskParams !== "object" || taskParams === null || Array.isArray(taskParams)) {
      throw TaskError.invalidParams("Invalid params: task must be an object");
    }
    return createToolTask(session, tool, rawArgs as Record<string, unknown>, params, taskParams as Record<string, unknown>, request, args.data);
  }
  if (session.config.tasks && support === "required") {
    // T-TOOL-4
    throw new TaskError("method_not_found", `Tool ${name} must be called as a task (execution.taskSupport is "required")`);
  }
  const progressToken = progressTokenOf(params);
  const ctx = plainToolContext(session.server, { requestId: request.requestId, signal: request.signal, progressToken: progressToken ?? undefined });
  let value: unknown;
  try {
    value = await tool.handler(args.data, ctx);
  } catch (error) {
    throw toRequestorError(session, name, error);
  }
  const result: CallToolResult = validateToolResult(value);
  return result;
}

/**
 * A plain call's handler threw: the requestor gets what `tasks/result` would replay for the same
 * throw — a JSON-RPC error as thrown, or -32603 "Internal error" with the details only in the log.
 */
function toRequestorError(session: SessionContext, tool: string, error: unknown): TaskError {
  if (error instanceof TaskError) return error;
  const { code, message, data } = toStoredError(error);
  if (code === RpcCode.InternalError) session.engine.logger.error({ tool, err: error }, "tool handler threw");
  return TaskError.protocol(code, message, data);
}

async function createToolTask(
  session: SessionContext,
  tool: RegisteredTool,
  rawArgs: Record<string, unknown>,
  params: LooseParams,
  taskParams: Record<string, unknown>,
  request: CallRequest,
  parsedArgs: unknown,
): Promise<Record<string, unknown>> {
  const stored: StoredToolCall = { name: tool.name, arguments: rawArgs };
  const task = await session.engine.create({
    owner: request.owner,
    method: "tools/call",
    name: tool.name,
    request: stored,
    origin: {
      sessionId: session.link.connectionId,
      progressToken: progressTokenOf(params),
      accepts: acceptedMethods(session.server.getClientCapabilities()),
    },
    ttl: taskParams["ttl"],
    retryable: tool.definition.retryable ?? false,
  });
  const immediate = tool.definition.immediateResponse;
  const text = typeof immediate === "function" ? immediate(parsedArgs) : immediate;
  // T-NEW-2: a CreateTaskResult, not the tool's result; T-NEW-3: optional model-immediate-response.
  return {
    task: toWireTask(task),
    ...(text !== undefined && { _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: text } }),
  };
}

function progressTokenOf(params: LooseParams): string | number | null {
  const meta = params?.["_meta"];
  if (typeof meta !== "object" || meta === null) return null;
  const token = (meta as Record<string, unknown>)["progressToken"];
  return typeof token === "string" || typeof token === "number" ? token : null;
}
