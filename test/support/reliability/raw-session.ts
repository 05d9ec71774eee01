/**
 * A low-overhead MCP requestor for the reliability suite: one Streamable HTTP session over plain
 * `fetch` (protocol 2025-11-25), one POST per request, the answer read whole (JSON, or the
 * response event of an SSE stream). No GET stream and no server requests: a load generator needs
 * only tools/call, tasks/get and tasks/result, and must see every failure as it is (a refused
 * connection, an HTTP status, a JSON-RPC error) rather than through a client's retries.
 */
export const PROTOCOL = "2025-11-25";

export interface RpcFailure {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error answer: the server was reached and said no. */
export class RpcAnswerError extends Error {
  constructor(readonly error: RpcFailure) {
    super(`JSON-RPC error ${error.code}: ${error.message}`);
    this.name = "RpcAnswerError";
  }
}

/** The server was not reached, or its answer was no JSON-RPC response (connection refused or reset, HTTP 404 of a lost session). */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: RpcFailure;
}

export class RawSession {
  private nextId = 1;

  private constructor(
    readonly url: string,
    private readonly sessionId: string,
  ) {}

  static async open(url: string, signal?: AbortSignal): Promise<RawSession> {
    const init = await post(
      url,
      undefined,
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "reliability", version: "0.0.0" } },
      },
      signal,
    );
    const sessionId = init.sessionId;
    if (!sessionId) throw new TransportError("the server assigned no session id");
    const session = new RawSession(url, sessionId);
    const done = await send(url, sessionId, { jsonrpc: "2.0", method: "notifications/initialized" }, signal);
    await done.body?.cancel();
    return session;
  }

  /** Sends one request; resolves with its result, rejects with {@link RpcAnswerError} or {@link TransportError}. */
  async request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const { answer } = await post(this.url, this.sessionId, { jsonrpc: "2.0", id, method, params }, signal);
    if (answer.error) throw new RpcAnswerError(answer.error);
    return (answer.result ?? {}) as Record<string, unknown>;
  }

  async close(): Promise<void> {
    await fetch(this.url, { method: "DELETE", headers: { "mcp-session-id": this.sessionId, "mcp-protocol-version": PROTOCOL } })
      .then((r) => r.body?.cancel())
      .catch(() => {});
  }
}

async function send(url: string, sessionId: string | undefined, message: unknown, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL,
  };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  try {
    return await fetch(url, { method: "POST", headers, body: JSON.stringify(message), ...(signal && { signal }) });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new TransportError(`fetch failed: ${String((error as { cause?: unknown }).cause ?? error)}`);
  }
}

async function post(
  url: string,
  sessionId: string | undefined,
  message: { id: number; [key: string]: unknown },
  signal?: AbortSignal,
): Promise<{ answer: Answer; sessionId: string | null }> {
  const response = await send(url, sessionId, message, signal);
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new TransportError(`the response broke off: ${String(error)}`, response.status);
  }
  const answer = parseAnswer(text, response.headers.get("content-type") ?? "", message.id);
  // An HTTP error with a JSON-RPC body is the server's answer; without one (a lost session's 404) it is transport.
  if (!answer) throw new TransportError(`HTTP ${response.status} without a JSON-RPC response: ${text.slice(0, 200)}`, response.status);
  return { answer, sessionId: response.headers.get("mcp-session-id") };
}

function parseAnswer(text: string, contentType: string, id: number): Answer | undefined {
  const candidates: string[] = contentType.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
    : [text];
  for (const raw of candidates) {
    try {
      const parsed = JSON.parse(raw) as Answer;
      if (parsed && (parsed.id === id || (parsed.error && parsed.id === null)) && ("result" in parsed || "error" in parsed)) return parsed;
    } catch {
      // not JSON: not the answer
    }
  }
  return undefined;
}
