import type { CallToolResult, ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { noteCreatedTask } from "../tracing/task-links.js";
import { currentCarrier } from "../tracing/trace-carrier.js";
import type { Caller } from "../../core/caller.js";
import { TaskError, toRpcError } from "../../core/errors.js";
import { nestsDeeperThan } from "../json-depth.js";
import type { LooseParams } from "../request-schemas.js";
import type { SessionContext } from "../era.js";
import { acceptedMethods, plainToolContext } from "../tool-context.js";
import type { RegisteredTool, ToolContext } from "../tool-definition.js";
import type { Logger } from "../../core/logger.js";
import type { TaskOrigin } from "../../core/task.js";
import { validateToolResult, type StoredToolCall } from "../tool-runner.js";
import type { EraHost } from "../era.js";
import { isLogLevel } from "../logging/log-level.js";
import { usesFallback } from "../fallback/fallback-client.js";
import { answerWithin } from "../fallback/background-call.js";
import { callTaskTool, isTaskTool } from "../fallback/task-tools.js";
import type { TaskKey } from "../../core/idempotency.js";
import type { KeyedTask } from "../../runtime/task-engine.js";
import { answerKeyedPlainly, fallbackKey, requestorKey } from "./keyed-call.js";
import { requestedWebhook } from "../webhook-request.js";
import type { RequestedWebhook } from "../../runtime/webhooks/webhook-routing.js";

/** Deepest nesting of arrays and objects accepted in tools/call `arguments` (docs/limits.md). */
export const MAX_ARGUMENT_DEPTH = 100;

interface CallRequest {
  requestId: RequestId;
  signal: AbortSignal;
  caller: Caller;
  /** Ends the call's SSE stream now, when it is resumable (the transport has an event store). */
  closeStream?: (() => void) | undefined;
}

/** What tools/call needs to know about the connection a task-augmented call came in on. */
export interface CallOrigin {
  caller: Caller;
  /** The session (or connection) id the task remembers for notifications. */
  sessionId: string;
  /** The client's capabilities, as declared at initialization. */
  capabilities: ClientCapabilities | undefined;
}

interface CheckedCall extends CheckedArguments {
  /** `params.task` when the call is task-augmented and tasks are on (T-NEW-4), else undefined. */
  task: Record<string, unknown> | undefined;
}

/** A tools/call whose tool exists and whose arguments passed every check. */
export interface CheckedArguments {
  tool: RegisteredTool;
  rawArgs: Record<string, unknown>;
  args: unknown;
}

/**
 * What tools/call checks in every era before anything runs: the tool exists, and its arguments
 * fit the nesting and size limits and the tool's schema (-32602 otherwise).
 */
export function checkToolArguments(
  { tools, config, engine }: Pick<EraHost, "tools" | "config" | "engine">,
  params: LooseParams,
): CheckedArguments {
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
  return { tool, rawArgs: rawArgs as Record<string, unknown>, args: args.data };
}

/**
 * Everything tools/call checks before anything runs: {@link checkToolArguments}, and the call's
 * form matches `execution.taskSupport` — a forbidden tool called as a task and a required tool
 * called plainly get -32601 (T-TOOL-2, T-TOOL-4).
 */
function checkToolCall(host: EraHost, params: LooseParams): CheckedCall {
  const { config, era } = host;
  const { tool, rawArgs, args } = checkToolArguments(host, params);
  const name = tool.name;
  const support = tool.definition.taskSupport ?? "forbidden";
  // T-NEW-4: with task support off, params.task is ignored and every call runs normally.
  const taskParams = config.tasks ? era.wire.taskParamsOf(params) : undefined;
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
  return { tool, rawArgs, args, task: taskParams as Record<string, unknown> | undefined };
}

/**
 * A task-augmented tools/call answered without a stream: checks, creates the task, returns the
 * CreateTaskResult (T-NEW-2). Used by the session handler and by the HTTP plain-JSON path.
 * @throws TaskError when the call is not task-augmented (or tasks are off): it needs a session.
 */
export async function answerTaskCall(host: EraHost, params: LooseParams, origin: CallOrigin): Promise<Record<string, unknown>> {
  const checked = checkToolCall(host, params);
  if (!checked.task) throw TaskError.invalidParams("Not a task-augmented call");
  return createdTaskResult(
    host,
    checked,
    params,
    origin,
    requestorKey(host.config, host.era.wire.idempotencyKeyOf(params), checked.tool, checked.rawArgs),
  );
}

/**
 * `tools/call`, plain or task-augmented (T-NEW, T-TOOL). Checks happen before anything runs.
 */
export async function toolsCall(session: SessionContext, params: LooseParams, request: CallRequest): Promise<Record<string, unknown>> {
  const capabilities = session.server.getClientCapabilities();
  if (
    usesFallback(session.config, session.era.wire.clientFollowsTasks(capabilities)) &&
    session.era.wire.taskParamsOf(params) === undefined
  ) {
    const fallback = await fallbackCall(session, params, request, capabilities);
    if (fallback) return fallback;
  }
  const checked = checkToolCall(session, params);
  const key = requestorKey(session.config, session.era.wire.idempotencyKeyOf(params), checked.tool, checked.rawArgs);
  if (checked.task) {
    return createdTaskResult(
      session,
      checked,
      params,
      {
        caller: request.caller,
        sessionId: session.connectionId,
        capabilities: session.server.getClientCapabilities(),
      },
      key,
    );
  }
  if (key) {
    // Recorded as a task under the key, so a retry replays its answer instead of running it again.
    const keyed = await createToolTask(session, checked, {
      caller: request.caller,
      origin: { sessionId: null, progressToken: null, accepts: [] },
      ttl: undefined,
      key,
    });
    return answerKeyedPlainly(session.engine, keyed, key, request.caller, request.signal);
  }
  const { tool, args } = checked;
  const progressToken = progressTokenOf(params);
  const ctx = plainToolContext(session.era, session.server, {
    requestId: request.requestId,
    signal: request.signal,
    progressToken: progressToken ?? undefined,
    logThreshold: session.logThreshold,
    owner: request.caller.owner,
    closeStream: request.closeStream,
  });
  return runToolPlainly(session.engine.logger, tool, args, ctx);
}

/**
 * A plain call from a client without task support (docs/hosts/README.md): our `task_*`
 * tools, and a task-capable tool run as a task answered within `backgroundAfterMs` or in the
 * background; undefined for a call the ordinary path serves (a forbidden tool runs plainly).
 */
async function fallbackCall(
  session: SessionContext,
  params: LooseParams,
  request: CallRequest,
  capabilities: ClientCapabilities | undefined,
): Promise<CallToolResult | undefined> {
  const name = params?.["name"];
  // The era's method whose stream carries a task's questions, on this call's stream: it relays them (elicitation).
  const stream = session.era.wire.questionStreamMethod;
  const results = stream === null ? undefined : session.era.methods[stream]?.session;
  const relay =
    results && ((taskId: string, signal: AbortSignal) => results(session, { taskId }, { ...request, signal, abandoned: signal }));
  if (isTaskTool(name, session.tools))
    return callTaskTool(session, name, params?.["arguments"], { caller: request.caller, signal: request.signal, ...(relay && { relay }) });
  const checked = checkToolArguments(session, params);
  const support = checked.tool.definition.taskSupport ?? "forbidden";
  // A required tool is refused on the ordinary path (T-TOOL-4) unless the server opted in.
  if (support === "forbidden" || (support === "required" && !session.config.fallbackRequired)) return undefined;
  // A retry with the same key — or, for a tool that dedupes, the same call while it still runs —
  // waits on the same task.
  const key = fallbackKey(
    requestorKey(session.config, session.era.wire.idempotencyKeyOf(params), checked.tool, checked.rawArgs),
    checked.tool,
    checked.rawArgs,
  );
  // No session id: the client would not understand task status notifications, and the progress
  // token is this call's, relayed only while it waits (answerWithin).
  const { task } = await createToolTask(session, checked, {
    caller: request.caller,
    origin: { sessionId: null, progressToken: null, accepts: acceptedMethods(capabilities) },
    ttl: undefined,
    key,
  });
  const progressToken = progressTokenOf(params);
  const answers = capabilities?.elicitation !== undefined || capabilities?.sampling !== undefined;
  return answerWithin(session, task, {
    caller: request.caller,
    signal: request.signal,
    ...(relay && answers && { relay }),
    sendLog: async (level, data, logger) => {
      if (!isLogLevel(level) || !session.logThreshold.admits(level)) return;
      await session.server.notification(session.era.wire.logMessage(level, data, logger), { relatedRequestId: request.requestId });
    },
    ...(progressToken !== null && {
      sendProgress: (progress) =>
        session.server.notification(
          { method: "notifications/progress", params: { progressToken, ...progress } },
          { relatedRequestId: request.requestId },
        ),
    }),
  });
}

/**
 * Runs a tool as a plain call — its `gather`, when it has one, then its handler — and checks what
 * it returned. A throw reaches the requestor as what `tasks/result` would replay for the same
 * throw — a JSON-RPC error as thrown, or -32603 "Internal error" with the details only in the log.
 */
export async function runToolPlainly(logger: Logger, tool: RegisteredTool, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  let value: unknown;
  try {
    const gather = tool.definition.gather;
    value = await tool.handler(args, gather ? { ...ctx, gathered: await gather(args, ctx) } : ctx);
  } catch (error) {
    throw toRequestorError(logger, tool.name, error);
  }
  return validateToolResult(tool, value);
}

function toRequestorError(logger: Logger, tool: string, error: unknown): TaskError {
  if (error instanceof TaskError) return error;
  const { body, known } = toRpcError(error);
  if (!known) logger.error({ tool, err: error }, "tool handler threw");
  const { code, message, data } = body;
  return TaskError.protocol(code, message, data);
}

/** The task of a task-augmented call, created (or the one its key names, as it is now), answered as the era's CreateTaskResult. */
async function createdTaskResult(
  host: EraHost,
  checked: CheckedCall,
  params: LooseParams,
  origin: CallOrigin,
  key: TaskKey | null,
): Promise<Record<string, unknown>> {
  // Refused (-32602) before anything is stored when the operator's allow-list does not cover it.
  const webhook = requestedWebhook(host.engine.webhookSettings, host.era.wire.webhookRequestOf(params));
  // A key that names a task already: that task, as it is now (its CreateTaskResult again).
  const { task } = await createToolTask(host, checked, {
    caller: origin.caller,
    origin: { sessionId: origin.sessionId, progressToken: progressTokenOf(params), accepts: acceptedMethods(origin.capabilities) },
    ttl: checked.task === undefined ? undefined : host.era.wire.requestedTtlOf(checked.task),
    key,
    ...(webhook && { webhook }),
  });
  const immediate = checked.tool.definition.immediateResponse;
  const text = typeof immediate === "function" ? immediate(checked.args) : immediate;
  return host.era.wire.encodeCreated(task, text);
}

/** How a tools/call's task is created: for whom, from where, with which ttl, under which idempotency key. */
interface ToolTaskCreation {
  caller: Caller;
  origin: TaskOrigin;
  ttl: unknown;
  key: TaskKey | null;
  gathered?: { value: unknown };
  /** The per-task webhook, already checked against the allow-list ({@link requestedWebhook}). */
  webhook?: RequestedWebhook;
}

/**
 * Creates the task of a checked tools/call, in any era: resolves once the store holds it, so a
 * lookup of its id succeeds from then on (T-NEW-2, X-NEW-3). The only way a tool task is made
 * (the web view's re-run too): the tool's recovery, retryability and default ttl are applied here.
 * Under an idempotency key, when there is one: the task the key names already (`created` false,
 * nothing run) or the new one.
 */
export async function createToolTask(
  { engine }: Pick<EraHost, "engine">,
  checked: Pick<CheckedArguments, "tool" | "rawArgs">,
  how: ToolTaskCreation,
): Promise<KeyedTask> {
  const { tool, rawArgs } = checked;
  const stored: StoredToolCall = { name: tool.name, arguments: rawArgs, ...(how.gathered && { gathered: how.gathered.value }) };
  // The creating request's span is the task's root: its context goes with the task to whichever
  // process runs it, and every later request on the task links to it.
  const trace = currentCarrier();
  const input = {
    ...how.caller,
    method: "tools/call",
    name: tool.name,
    request: stored,
    origin: trace ? { ...how.origin, trace } : how.origin,
    ttl: how.ttl === undefined ? tool.definition.defaultTtlMs : how.ttl,
    ...(tool.definition.recovery !== undefined && { recovery: tool.definition.recovery }),
    retryable: tool.definition.retryable ?? false,
    ...(how.webhook && { webhook: how.webhook }),
  };
  const made = how.key ? await engine.createKeyed(input, how.key) : { task: await engine.create(input), created: true };
  if (made.created) noteCreatedTask(made.task);
  return made;
}

export function progressTokenOf(params: LooseParams): string | number | null {
  const meta = params?.["_meta"];
  if (typeof meta !== "object" || meta === null) return null;
  const token = (meta as Record<string, unknown>)["progressToken"];
  return typeof token === "string" || typeof token === "number" ? token : null;
}
