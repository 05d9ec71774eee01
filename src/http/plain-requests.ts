import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { toRpcError } from "../core/errors.js";
import { NEEDS_STREAM, type PlainMethod } from "../mcp/era.js";
import { callerOf } from "../mcp/owner.js";
import type { LooseParams } from "../mcp/request-schemas.js";
import type { TaskServer } from "../mcp/task-server.js";
import { sendJson } from "./json-rpc-response.js";
import { LazyAbort } from "../core/lazy-abort.js";
import { peerOf } from "./request-peer.js";
import type { OperationTrace } from "../mcp/era.js";
import { inOperationSpan, type ServerOperation } from "../mcp/tracing/operation-span.js";
import { servedNames } from "../mcp/tracing/served-names.js";
import { carrierFrom } from "../mcp/tracing/trace-carrier.js";

/** A single JSON-RPC request that the session's era can answer as plain JSON. */
export interface PlainRequestMessage {
  id: string | number;
  method: string;
  params: LooseParams;
  answer: PlainMethod;
}

/**
 * The body as one request of a method the era answers as plain JSON (`methods[…].plain`, T-GET-4), or null: a batch,
 * a notification, a response, or any other method goes to the SDK's transport.
 */
export function plainRequestOf(app: TaskServer, body: unknown): PlainRequestMessage | null {
  if (!app.config.tasks || typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const message = body as Record<string, unknown>;
  const { id, method, params } = message;
  if (message["jsonrpc"] !== "2.0" || typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) return null;
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) return null;
  // A key where it is not defined goes the SDK's way, whose routing schema refuses it (-32602).
  if (method !== "tools/call" && (params as LooseParams)?.["idempotencyKey"] !== undefined) return null;
  const answer = Object.hasOwn(app.host.era.methods, method) ? app.host.era.methods[method]?.plain : undefined;
  return answer ? { id, method, params: params as LooseParams, answer } : null;
}

/** The session a plain request came on. */
export interface PlainSession {
  id: string;
  clientCapabilities: ClientCapabilities | undefined;
  /** See {@link PlainRequest.sessionStreamCarriesOwnTasks}. */
  sessionStreamCarriesOwnTasks: boolean;
}

/**
 * Answers a plain request with one `application/json` response, and says what came of it:
 * "needs-stream" when the era found it needs a stream (nothing written: the caller hands it to the
 * transport), "abandoned" when the requestor hung up first or `abandoned` was aborted by the caller
 * (the request withdrawn, its session ended): nothing written. The handler's signal is `abandoned`'s;
 * this function aborts it when the connection closes.
 */
export function answerPlain(
  app: TaskServer,
  request: PlainRequestMessage,
  auth: AuthInfo | undefined,
  session: PlainSession,
  req: IncomingMessage,
  res: ServerResponse,
  abandoned: LazyAbort = new LazyAbort(),
): Promise<"answered" | "abandoned" | "needs-stream"> {
  const onClose = (): void => abandoned.abort("the requestor closed the connection");
  // `on`, not `once`: taken off below, and `once` would add a wrapper for as long as the request waits.
  res.on("close", onClose);
  let answered: Promise<unknown>;
  try {
    const caller = callerOf(auth, app.config.bind, session.id, peerOf(req));
    const answer = () =>
      request.answer(app.host, request.params, {
        caller,
        sessionId: session.id,
        clientCapabilities: session.clientCapabilities,
        get signal() {
          return abandoned.signal;
        },
        abandoned,
        sessionStreamCarriesOwnTasks: session.sessionStreamCarriesOwnTasks,
      });
    const traced = app.host.era.wire.operationTrace(request.method, request.params, session);
    // A request the session server will serve on a stream gets its span there, not a second one here.
    answered = traced.servedOnStream
      ? answer()
      : inOperationSpan(plainOperation(app, request, session, req, traced), answer, undefined, app.host.recordOperation);
  } catch (error) {
    answered = Promise.reject(error);
  }
  // Continued, not awaited: no frame of this function is kept while the request waits.
  return answered.then(
    (result) => {
      res.off("close", onClose);
      // A request its requestor gave up on while the handler looked (the connection closed, or it
      // was withdrawn) is not handed to a stream: one would be opened for nobody.
      if (result === NEEDS_STREAM) return abandoned.aborted ? "abandoned" : "needs-stream";
      return sent(res, session.id, { jsonrpc: "2.0", id: request.id, result });
    },
    (error: unknown) => {
      res.off("close", onClose);
      if (abandoned.aborted) return "abandoned";
      const { body: rpcError, known } = toRpcError(error);
      if (!known) {
        const taskId = typeof request.params?.["taskId"] === "string" ? request.params["taskId"] : undefined;
        app.engine.logger.error(
          { err: error, method: request.method, requestId: req.headers["x-request-id"], taskId },
          "plain JSON request failed",
        );
      }
      return sent(res, session.id, { jsonrpc: "2.0", id: request.id, error: rpcError });
    },
  );
}

/** Answers with `body` (a module function, not a closure kept by each waiting request). */
function sent(res: ServerResponse, sessionId: string, body: object): "answered" {
  sendJson(res, 200, body, { "mcp-session-id": sessionId });
  return "answered";
}

/** The span's view of a plain request: its method, what its era read from its params, its session and headers. */
function plainOperation(
  app: TaskServer,
  request: PlainRequestMessage,
  session: PlainSession,
  req: IncomingMessage,
  traced: OperationTrace,
): ServerOperation {
  const version = req.headers["mcp-protocol-version"];
  const headerCarrier = carrierFrom(req.headers);
  const { servedOnStream: _servedOnStream, ...trace } = traced;
  return {
    method: request.method,
    ...trace,
    requestId: request.id,
    sessionId: session.id,
    ...(typeof version === "string" && { protocolVersion: version }),
    transport: "tcp",
    ...(headerCarrier && { headerCarrier }),
    // Only a method with a plain answer in the era's table comes this way (plainRequestOf).
    served: servedNames({ tools: app.host.tools, prompts: app.host.features?.prompts }, () => true),
  };
}
