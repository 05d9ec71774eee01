import { KEY_ELSEWHERE } from "../request-schemas.js";
import { RpcCode, TaskError, toRpcError } from "../../core/errors.js";
import { messageShapeProblem } from "../json-rpc-message-shape.js";
import { wireCodeIn, wireErrorIn } from "../own-error-wire.js";
import type { MessageStream, StatelessAnswer, StatelessEra, StatelessHost, StatelessHttpRequest } from "../era.js";
import type { LooseParams } from "../request-schemas.js";
import { declaredVersionOf, readEnvelope, type Envelope } from "../wire/rev2026-07-28/envelope.js";
import { discover, toolsList } from "./discovery.js";
import { FEATURE_CORE } from "./feature-methods.js";
import { checkMethodHeader, checkNameHeader, checkVersionHeader } from "./routing-headers.js";
import { subscriptionsListen } from "./subscriptions.js";
import { tasksCancel, tasksGet, tasksUpdate } from "./tasks-methods.js";
import { toolsCall } from "./tools-call.js";
import { withProgressStream } from "./progress-stream.js";
import { progressTokenOf } from "../handlers/tools-call.js";
import { METHOD, missingTasksCapability, PROTOCOL_VERSION, RESULT_TYPE } from "../wire/rev2026-07-28/wire.js";
import { wire20260728 as wire } from "../wire/rev2026-07-28/codec.js";
import { inOperationSpan } from "../tracing/operation-span.js";
import { servedNames, type ServedNames } from "../tracing/served-names.js";
import { carrierFrom } from "../tracing/trace-carrier.js";

type Method = (
  host: StatelessHost,
  params: LooseParams,
  envelope: Envelope,
  request: StatelessHttpRequest,
) => Promise<Record<string, unknown>> | Record<string, unknown>;

/** Methods every 2026-07-28 request may call. */
const CORE: Readonly<Record<string, Method>> = {
  [METHOD.discover]: (host) => discover(host),
  [METHOD.toolsList]: (host, _params, envelope) => toolsList(host, envelope),
  [METHOD.toolsCall]: toolsCall,
  ...FEATURE_CORE,
};

/**
 * The extension's methods (X-CAP-12), served only with task support on. There is no `tasks/result`
 * and no `tasks/list` (X-LEG-1, X-LEG-6): membership is the whole story, so both get -32601.
 */
const TASKS: Readonly<Record<string, Method>> = {
  [METHOD.tasksGet]: (host, params, _envelope, request) => tasksGet(host, params, request),
  [METHOD.tasksUpdate]: (host, params, _envelope, request) => tasksUpdate(host, params, request),
  [METHOD.tasksCancel]: (host, params, _envelope, request) => tasksCancel(host, params, request),
};

function methodOf(host: StatelessHost, method: string): { run: Method; isTasks: boolean } | undefined {
  if (Object.hasOwn(CORE, method)) return { run: CORE[method] as Method, isTasks: false };
  if (host.config.tasks && Object.hasOwn(TASKS, method)) return { run: TASKS[method] as Method, isTasks: true };
  return undefined;
}

/** What this era serves on `host`: its method tables (and the listen stream), the host's tools and prompts. */
function servedBy(host: StatelessHost): ServedNames {
  return servedNames(
    { tools: host.tools, prompts: host.features?.prompts },
    (method) => methodOf(host, method) !== undefined || (method === METHOD.subscriptionsListen && host.config.tasks),
  );
}

type Message = { id: string | number | null; method: string; params: LooseParams };

/** The body as one JSON-RPC request or notification, or a -32600 (a batch, a response, anything else) with the id it could read. */
function messageOf(body: unknown): Message | { invalid: string; id: string | number | null } {
  const problem = messageShapeProblem(body);
  if (problem) return { invalid: problem.message, id: problem.id };
  const { id, method, params } = body as Record<string, unknown>;
  // This era's server sends its client no requests, so a response answers nothing.
  if (typeof method !== "string")
    return {
      invalid: 'Invalid Request: expected a request or a notification, with a "method"',
      id: typeof id === "string" || typeof id === "number" ? id : null,
    };
  return { id: (id as string | number | undefined) ?? null, method, params: params as LooseParams };
}

/**
 * Answers one request, in the order the checks depend on each other: the routing headers against
 * the body (-32020), the envelope (-32602), the method (-32601), the capability gate before any
 * task lookup (-32021, X-CONF-6), then the method itself.
 */
async function answerRequest(
  host: StatelessHost,
  message: Message & { id: string | number },
  request: StatelessHttpRequest,
): Promise<{ result: Record<string, unknown> } | { stream: MessageStream }> {
  const { method, params } = message;
  checkMethodHeader(method, request.headers);
  const envelope = readEnvelope(params);
  checkVersionHeader(envelope.protocolVersion, request.headers);
  checkNameHeader(method, params, request.headers);
  // The one method answered with a stream (X-NOTE); with tasks off there is nothing to listen to.
  if (method === METHOD.subscriptionsListen && host.config.tasks)
    return { stream: await subscriptionsListen(host, params, envelope, request, message.id) };
  const served = methodOf(host, method);
  if (!served) throw new TaskError("method_not_found", `Method not found: ${method}`);
  // SEP-3182 defines the key for tools/call only: elsewhere it would be ignored, so it is refused.
  if (method !== METHOD.toolsCall && params?.["idempotencyKey"] !== undefined)
    throw TaskError.invalidParams(`Invalid params: ${KEY_ELSEWHERE}`);
  if (served.isTasks && !envelope.declaresTasks) throw missingTasksCapability(method);
  // A plain call's progress rides an SSE answer once the handler reports some (progress-stream.ts).
  const token = method === METHOD.toolsCall ? progressTokenOf(params) : null;
  if (token !== null)
    return await withProgressStream(message.id, token, request.signal, (progress) => toolsCall(host, params, envelope, request, progress));
  const result = await served.run(host, params, envelope, request);
  // X-CAP-9: every result says its type.
  return { result: typeof result["resultType"] === "string" ? result : { ...result, resultType: RESULT_TYPE.complete } };
}

/**
 * Protocol revision 2026-07-28 with the tasks extension (SEP-2663): stateless requests, each with
 * its own `_meta` envelope, on the same engine and store as the 2025-11-25 sessions. Tasks are
 * era-neutral records, so a task either era created is served by the other's requests too.
 */
export const tasksExt = {
  kind: "stateless",
  id: PROTOCOL_VERSION,
  wire,

  claims({ protocolVersionHeader, hasSessionId, body }) {
    if (protocolVersionHeader !== undefined) return protocolVersionHeader === PROTOCOL_VERSION;
    return !hasSessionId && declaredVersionOf(body) === PROTOCOL_VERSION;
  },

  async answer(host, body, request): Promise<StatelessAnswer> {
    const message = messageOf(body);
    if ("invalid" in message)
      return { id: message.id, error: { code: wireCodeIn(wire.ownErrorCodes, RpcCode.InvalidRequest), message: message.invalid } };
    // A notification gets no answer; none of this era's needs handling (cancel is tasks/cancel, X-CANCEL-1).
    const { id } = message;
    if (id === null) return null;
    try {
      const headerCarrier = carrierFrom(request.headers);
      const answered = await inOperationSpan(
        {
          method: message.method,
          ...wire.operationTrace(message.method, message.params),
          requestId: id,
          protocolVersion: PROTOCOL_VERSION,
          transport: "tcp",
          ...(headerCarrier && { headerCarrier }),
          served: servedBy(host),
        },
        () => answerRequest(host, { ...message, id }, request),
        (answer) => ("result" in answer && answer.result["isError"] === true ? { errorType: "tool_error" } : undefined),
        host.recordOperation,
      );
      return { id, ...answered };
    } catch (error) {
      const { known } = toRpcError(error);
      if (!known) {
        const taskId = typeof message.params?.["taskId"] === "string" ? message.params["taskId"] : undefined;
        host.engine.logger.error({ err: error, method: message.method, taskId }, "2026-07-28 request failed");
      }
      return { id: message.id, error: wireErrorIn(wire.ownErrorCodes, error) };
    }
  },
} satisfies StatelessEra;
