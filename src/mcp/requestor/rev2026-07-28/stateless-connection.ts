import { randomUUID } from "node:crypto";
import { currentCarrier } from "../../tracing/trace-carrier.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { RpcCode } from "../../../core/errors.js";
import { ConnectionError, RemoteError } from "../requestor-errors.js";
import { connectionCause, notFoundCause } from "../../connection-cause.js";
import type { HttpConnectionOptions } from "../requestor-era.js";
import { META, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../wire/rev2026-07-28/wire.js";

/** Who a stateless requestor is and how it reaches the server (its `clientInfo` goes in every envelope, X-CAP-8: SHOULD be sent). */
export type StatelessConnectionOptions = HttpConnectionOptions;

/** Options of one request of a stateless connection: whether it declares the tasks extension, its capabilities, abort signal, progress. */
export interface StatelessRequestOptions {
  /** Declare the tasks extension on this request (X-CAP-5: only this request counts). */
  declareTasks: boolean;
  /** The client capabilities besides the extension (elicitation, sampling: what the handlers can answer). */
  capabilities: Record<string, unknown>;
  signal?: AbortSignal;
  /** Asks for `notifications/progress` (a progressToken); they come on an SSE answer. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** The methods whose `Mcp-Name` header mirrors a body field (X-HTTP-1, X-HTTP-2). */
const NAME_FIELD: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** X-HTTP-5: a header value that is not printable ASCII travels Base64-sentinel-encoded. */
function headerValue(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * One 2026-07-28 endpoint seen by a requestor (SEP-2575): every request is a POST of its own with
 * the `_meta` envelope (X-CAP-8) and the `Mcp-Method`/`Mcp-Name`/`MCP-Protocol-Version` headers
 * (X-HTTP-1..3); there is no session and nothing to open or close. An answer is one JSON
 * response, or an SSE stream of the request's notifications ending with its response.
 *
 * Errors: a JSON-RPC error answer is a {@link RemoteError}; an HTTP 401/403 a StreamableHTTPError
 * (as the SDK transport raises it, so callers tell authentication failures the same way for both
 * eras); anything else (no connection, an answer that is not JSON-RPC) a {@link ConnectionError}.
 */
export class StatelessConnection {
  readonly url: URL;
  private readonly prefix = randomUUID();
  private next = 0;

  constructor(
    url: URL | string,
    private readonly options: StatelessConnectionOptions = {},
  ) {
    this.url = new URL(url);
  }

  /** Sends one request; resolves with its result (`resultType` included). */
  async request(method: string, params: Record<string, unknown>, options: StatelessRequestOptions): Promise<Record<string, unknown>> {
    const id = `${this.prefix}.${++this.next}`;
    const progressToken = options.onProgress ? id : undefined;
    const capabilities = { ...options.capabilities, ...(options.declareTasks && { extensions: { [TASKS_EXTENSION]: {} } }) };
    const carrier = currentCarrier();
    const meta = {
      ...(isObject(params["_meta"]) ? params["_meta"] : {}),
      // SEP-414: the active trace context, so the server's spans join the requestor's trace.
      ...carrier,
      [META.protocolVersion]: PROTOCOL_VERSION,
      [META.clientInfo]: this.options.clientInfo ?? { name: "mcp-tasks", version: "0.1.0" },
      [META.clientCapabilities]: capabilities,
      ...(progressToken !== undefined && { progressToken }),
    };
    const field = NAME_FIELD[method];
    const name = field !== undefined ? params[field] : undefined;
    const headers: Record<string, string> = {
      ...this.options.headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      "mcp-method": method,
      ...(typeof name === "string" && { "mcp-name": headerValue(name) }),
      ...(this.options.token !== undefined && { authorization: `Bearer ${this.options.token}` }),
      // W3C Trace Context and Baggage headers have the same names as the `_meta` keys.
      ...carrier,
    };
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
    let response: Response;
    try {
      response = await (this.options.fetch ?? fetch)(this.url, {
        method: "POST",
        headers,
        body,
        ...(options.signal !== undefined && { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ConnectionError(
        `Cannot connect to ${this.url.href}: ${connectionCause(this.url.href, error)}`,
        RpcCode.ConnectionClosed,
        error,
      );
    }
    if (response.status === 401 || response.status === 403) {
      // The server's own words go with the status (its JSON-RPC error: code and message).
      const refusal = rpcErrorOf(await response.json().catch(() => undefined));
      throw new StreamableHTTPError(
        response.status,
        `HTTP ${response.status} from ${this.url.href}${refusal === null ? "" : `: ${refusal.message} (${refusal.code})`}`,
      );
    }
    const type = response.headers.get("content-type") ?? "";
    const message = type.includes("text/event-stream")
      ? await this.fromStream(response, id, progressToken, options)
      : await response.json().catch(() => undefined);
    return answerOf(message, method, response.status, this.url.href);
  }

  /** The SSE answer's events until the response to `id`: progress goes to the listener on the way (X-PROG). */
  private async fromStream(
    response: Response,
    id: string,
    progressToken: string | undefined,
    options: StatelessRequestOptions,
  ): Promise<unknown> {
    const reader = response.body?.getReader();
    if (!reader) return undefined;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).replace(/^ /, ""))
            .join("\n");
          buffer = buffer.slice(end + 2);
          if (!data) continue;
          let message: unknown;
          try {
            message = JSON.parse(data);
          } catch {
            continue;
          }
          if (!isObject(message)) continue;
          if (message["id"] === id && (message["result"] !== undefined || message["error"] !== undefined)) return message;
          const note = isObject(message["params"]) ? message["params"] : {};
          if (
            message["method"] === "notifications/progress" &&
            progressToken !== undefined &&
            note["progressToken"] === progressToken &&
            typeof note["progress"] === "number"
          ) {
            options.onProgress?.({
              progress: note["progress"],
              ...(typeof note["total"] === "number" && { total: note["total"] }),
              ...(typeof note["message"] === "string" && { message: note["message"] }),
            });
          }
        }
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ConnectionError(
        `The connection to ${this.url.host} broke off before the answer: ${connectionCause(this.url.href, error)}`,
        RpcCode.ConnectionClosed,
        error,
      );
    } finally {
      reader.releaseLock();
      await response.body?.cancel().catch(() => {});
    }
  }
}

/** The result of a JSON-RPC response, or its error thrown. */
function answerOf(message: unknown, method: string, status: number, url: string): Record<string, unknown> {
  if (isObject(message)) {
    const error = message["error"];
    if (isObject(error) && typeof error["code"] === "number") {
      const taskId = null;
      throw new RemoteError(error["code"], typeof error["message"] === "string" ? error["message"] : "", error["data"], taskId);
    }
    if (isObject(message["result"])) return message["result"];
  }
  if (status === 404 || status === 405)
    throw new ConnectionError(`Cannot connect to ${url}: ${notFoundCause(url, status)}`, RpcCode.ConnectionClosed);
  throw new ConnectionError(
    `The server answered ${method} with HTTP ${status} and no JSON-RPC response`,
    status >= 400 ? RpcCode.ConnectionClosed : RpcCode.InternalError,
  );
}

/** The error of a JSON-RPC error response, or null for anything else. */
function rpcErrorOf(body: unknown): { code: number; message: string } | null {
  const error = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== "object" || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === "number" && typeof message === "string" ? { code, message: message.slice(0, 300) } : null;
}
