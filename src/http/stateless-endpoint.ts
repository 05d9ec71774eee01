import type { IncomingMessage, ServerResponse } from "node:http";
import type { AbortWatch } from "../core/abort-watch.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { MessageStream, StatelessAnswer, StatelessEra } from "../mcp/era.js";
import { STATELESS_ERAS } from "../mcp/eras.js";
import { callerOf } from "../mcp/owner.js";
import { flattenHead } from "./flat-head.js";
import { LazyAbort } from "../core/lazy-abort.js";
import { peerOf } from "./request-peer.js";
import type { TaskServer } from "../mcp/task-server.js";
import { sendJson } from "./json-rpc-response.js";
import { httpAnswerOfError } from "./rpc-http-errors.js";

/**
 * The MCP endpoint's stateless path (2026-07-28, SEP-2575): a POST one of the stateless eras
 * claims is answered on its own, as one JSON response, with no `initialize` and no session. The
 * HTTP status follows the JSON-RPC code (core 2026-07-28: -32602/-32020/-32021 → 400, -32601 → 404,
 * X-CAP-8, X-HTTP-4, X-HTTP-6, X-CAP-6), a creation over the queue bound is 429, and an error
 * with `data.retryAfterMs` carries Retry-After; results are 200.
 */
export class StatelessEndpoint {
  constructor(
    private readonly app: TaskServer,
    private readonly eras: readonly StatelessEra[] = STATELESS_ERAS,
  ) {}

  /** The era that serves this POST, or undefined: it goes to the session endpoint. */
  claim(req: IncomingMessage, body: unknown): StatelessEra | undefined {
    const header = req.headers["mcp-protocol-version"];
    const request = {
      protocolVersionHeader: typeof header === "string" ? header : undefined,
      hasSessionId: req.headers["mcp-session-id"] !== undefined,
      body,
    };
    return this.eras.find((era) => era.claims(request));
  }

  post(era: StatelessEra, req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo | undefined): Promise<void> {
    const abandoned = new LazyAbort();
    const onClose = (): void => abandoned.abort("the requestor closed the connection");
    // `on`, not `once`: taken off below, and `once` would add a wrapper for as long as a stream waits.
    res.on("close", onClose);
    let answered: Promise<StatelessAnswer>;
    try {
      // Owner binding as in a session (T-SEC-1): the principal, else nobody — there is no session to bind to.
      const caller = callerOf(auth, this.app.config.bind, undefined, peerOf(req));
      answered = era.answer(this.app.host, body, {
        headers: headersOf(req),
        caller,
        get signal() {
          return abandoned.signal;
        },
        abandoned,
      });
    } catch (error) {
      answered = Promise.reject(error);
    }
    // Continued, not awaited: no frame of this method is kept while a stream answer waits. The
    // close listener comes off once the answer is written (a stream's once it ends), in each branch
    // rather than in a `finally` that would be one more step kept for as long as a stream waits.
    return answered.then(
      (answer) => {
        if (abandoned.aborted || answer === null || !("stream" in answer)) res.off("close", onClose);
        if (abandoned.aborted) return;
        if (answer === null) {
          res.writeHead(202).end();
          return;
        }
        if ("stream" in answer) return sendStream(res, answer.stream, abandoned, onClose);
        if ("error" in answer) {
          const { status, headers } = httpAnswerOfError(answer.error);
          sendJson(res, status, { jsonrpc: "2.0", ...answer }, headers);
        } else sendJson(res, 200, { jsonrpc: "2.0", ...answer });
      },
      (error: unknown) => {
        res.off("close", onClose);
        throw error;
      },
    );
  }
}

/** Writes a stream answer as Server-Sent Events, one JSON-RPC message per event, until it ends or the requestor hangs up; then takes `onClose` off. */
function sendStream(res: ServerResponse, stream: MessageStream, signal: AbortWatch, onClose: () => void): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  flattenHead(res);
  res.flushHeaders();
  const send = (message: Record<string, unknown>): void => {
    if (!signal.aborted) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  };
  const ended = (): void => {
    res.end();
    res.off("close", onClose);
  };
  return stream(send).then(ended, (error: unknown) => {
    ended();
    throw error;
  });
}

/** The request's headers by lower-case name (node lower-cases them), single values only. */
function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  return headers;
}
