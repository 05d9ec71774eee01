import type { CallToolResult, ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../../core/caller.js";
import { TaskError, toRpcError } from "../../core/errors.js";
import { nestsDeeperThan } from "../json-depth.js";
import type { LooseParams } from "../request-schemas.js";
import type { SessionContext } from "../era.js";
import { acceptedMethods, plainToolContext } from "../tool-context.js";
import type { RegisteredTool } from "../tool-definition.js";
import { validateToolResult, type StoredToolCall } from "../tool-runner.js";
import type { EraHost } from "../era.js";

/** Deepest nesting of arrays and objects accepted in tools/call `arguments` (README "Limits and defaults"). */
export const MAX_ARGUMENT_DEPTH = 100;

interface CallRequest {
  requestId: RequestId;
  signal: AbortSignal;
  caller: Caller;
}

/** What tools/call needs to know about the connection a task-augmented call came in on. */
export interface CallOrigin {
  caller: Caller;
  /** The session (or connection) id the task remembers for notifications. */
  sessionId: string;
  /** The client's capabilities, as declared at initialization. */
  capabilities: ClientCapabilities | undefined;
}

interface CheckedCall {
  tool: RegisteredTool;
  rawArgs: Record<string, unknown>;
  args: unknown;
  /** `params.task` when the call is task-augmented and tasks are on (T-NEW-4), else undefined. */
  task: Record<string, unknown> | undefined;
}

/**
 * Everything tools/call checks before anything runs: the tool exists, its arguments fit the size
 * limit and the schema, and the call's form matches `execution.taskSupport` — a forbidden tool
 * called as a task and a required tool called plainly get -32601 (T-TOOL-2, T-TOOL-4).
 */
function checkToolCall({ tools, config, engine, era }: EraHost, params: LooseParams): CheckedCall {
  const name = params?.["name"];
  if (typeof name !== "string" || name.length === 0) throw TaskError.invalidParams("Invalid params: name must be a non-empty string");
  const tool = tools.get(name);
  if (!tool) throw TaskError.invalidParams(`Unknown tool: ${name}`);
  const rawArgs = params?.["arguments"] ?? {};
  if (typeof rawArgs !== "object" || rawArgs === null || Array.isArray(rawArgs)) {
    throw TaskError.invalidParams("Invalid params: arguments must be an object");
  }
  // Before anything serializes them: nesting this deep would overflow the stack (-32603) instead.
  if (nestsDeeperThan(rawArgs, MAX_ARGUMENT_DEPTH)) {
    throw TaskError.invalidParams(`Invalid params: arguments nest more than ${MAX_ARGUMENT_DEPTH} levels deep`);
  }
  const size = Buffer.byteLength(JSON.stringify(rawArgs));
  if (size > config.maxArgumentBytes) {
    engine.observer.limitRejected("argument_bytes");
    throw TaskError.invalidParams(`Invalid params: arguments are ${size} bytes, more than the limit of ${config.maxArgumentBytes}`);
  }
  const args = tool.definition.input.safeParse(rawArgs);
  if (!args.success) {
    const detail = args.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw TaskError.invalidParams(`Invalid arguments for tool ${name}: ${detail}`);
  }
  const support = tool.definition.taskSupport ?? "forbidden";
  // T-NEW-4: with task support off, params.task is ignored and every call runs normally.
  const taskParams = config.tasks ? era.taskParamsOf(params) : undefined;
  if (taskParams !== undefined) {
    if (support === "forbidden") {
      // T-TOOL-2
      throw new TaskError("method_not_found", `Tool ${name} does not support task-augmented calls (execution.taskSupport is "forbidden")`);
    }
    if (typeof taskParams !== "object" || taskParams === null || Array.isArray(taskParams)) {
      throw TaskError.invalidParams("Invalid params: task must be an object");
    }
  } else if (config.tasks && support === "required") {
    // T-TOOL-4
    throw new TaskError("method_not_found", `Tool ${name} must be called as a task (execution.taskSupport is "required")`);
  }
  return { tool, rawArgs: rawArgs as Record<string, unknown>, args: args.data, task: taskParams as Record<string, unknown> | undefined };
}

/**
 * A task-augmented tools/call answered without a stream: checks, creates the task, returns the
 * CreateTaskResult (T-NEW-2). Used by the session handler and by the HTTP plain-JSON path.
 * @throws TaskError when the call is not task-augmented (or tasks are off): it needs a session.
 */
export async function createToolTaskFromParams(host: EraHost, params: LooseParams, origin: CallOrigin): Promise<Record<string, unknown>> {
  const checked = checkToolCall(host, params);
  if (!checked.task) throw TaskError.invalidParams("Not a task-augmented call");
  return createToolTask(host, checked, params, origin);
}

/**
 * `tools/call`, plain or task-augmented (T-NEW, T-TOOL). Checks happen before anything runs.
 */
export async function toolsCall(session: SessionContext, params: LooseParams, request: CallRequest): Promise<Record<string, unknown>> {
  const checked = checkToolCall(session, params);
  if (checked.task) {
    return createToolTask(session, checked, params, {
      caller: request.caller,
      sessionId: session.connectionId,
      capabilities: session.server.getClientCapabilities(),
    });
  }
  const { tool, args } = checked;
  const name = tool.name;
  const progressToken = progressTokenOf(params);
  const ctx = plainToolContext(session.server, { requestId: request.requestId, signal: request.signal, progressToken: progressToken ?? undefined });
  let value: unknown;
  try {
    value = await tool.handler(args, ctx);
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
  const { body, known } = toRpcError(error);
  if (!known) session.engine.logger.error({ tool, err: error }, "tool handler threw");
  const { code, message, data } = body;
  return TaskError.protocol(code, message, data);
}

async function createToolTask({ engine, era }: EraHost, checked: CheckedCall, params: LooseParams, origin: CallOrigin): Promise<Record<string, unknown>> {
  const { tool, rawArgs, args } = checked;
  const stored: StoredToolCall = { name: tool.name, arguments: rawArgs };
  const task = await engine.create({
    ...origin.caller,
    method: "tools/call",
    name: tool.name,
    request: stored,
    origin: {
      sessionId: origin.sessionId,
      progressToken: progressTokenOf(params),
      accepts: acceptedMethods(origin.capabilities),
    },
    ttl: checked.task?.["ttl"],
    retryable: tool.definition.retryable ?? false,
  });
  const immediate = tool.definition.immediateResponse;
  const text = typeof immediate === "function" ? immediate(args) : immediate;
  return era.encodeCreated(task, text);
}

function progressTokenOf(params: LooseParams): string | number | null {
  const meta = params?.["_meta"];
  if (typeof meta !== "object" || meta === null) return null;
  const token = (meta as Record<string, unknown>)["progressToken"];
  return typeof token === "string" || typeof token === "number" ? token : null;
}
