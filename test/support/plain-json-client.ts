import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { safeParse, type AnySchema, type SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import {
  LATEST_PROTOCOL_VERSION,
  McpError,
  type ClientCapabilities,
  type JSONRPCMessage,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Traffic } from "./in-memory-fixture.js";
import { SseSplitter } from "./sse.js";

/** What the conformance suites use of a requestor: the SDK Client is one, {@link PlainJsonClient} another. */
export type Requestor = Pick<Client, "request" | "getServerCapabilities" | "setRequestHandler" | "setNotificationHandler" | "close">;

type Message = JSONRPCMessage & {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/** Methods the server answers as one `application/json` response once it declares tasks (src/http/direct-task-requests.ts). */
const PLAIN_METHODS = new Set(["tasks/get", "tasks/list", "tasks/cancel"]);

/**
 * A JSON-RPC-over-fetch requestor that speaks only what the plain-JSON answering needs: initialize
 * and notifications/initialized, then one POST per request, each answer read whole. It opens no
 * GET stream and answers no server request, so status notifications, progress and input requests
 * never reach it (the suites run those tests on the streaming paths only).
 *
 * It holds the server to the plain-JSON path: while the server declares tasks, tasks/get|list|cancel
 * and a task-augmented tools/call must come back as `application/json`, not as an event stream.
 * Everything else (and tasks/result, which falls back to a stream when it has an input request to
 * deliver, src/http/direct-task-result.ts) may come back as SSE, which is read to its response.
 */
export class PlainJsonClient implements Requestor {
  readonly traffic: Traffic = { sent: [], received: [] };
  private nextId = 1;
  private sessionId: string | undefined;
  private serverCapabilities: ServerCapabilities | undefined;
  private readonly open = new Set<AbortController>();

  private constructor(private readonly url: URL) {}

  static async connect(url: URL | string, capabilities: ClientCapabilities): Promise<PlainJsonClient> {
    const client = new PlainJsonClient(new URL(url));
    const init = await client.exchange({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities, clientInfo: { name: "plain-json-client", version: "0.0.0" } },
    });
    if (init.message.error) throw new Error(`initialize failed: ${JSON.stringify(init.message.error)}`);
    client.sessionId = init.sessionId ?? undefined;
    if (!client.sessionId) throw new Error("the server assigned no session id");
    client.serverCapabilities = (init.message.result as { capabilities?: ServerCapabilities } | undefined)?.capabilities;
    const initialized = await client.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    await initialized.body?.cancel();
    if (initialized.status !== 202) throw new Error(`notifications/initialized was answered with HTTP ${initialized.status}`);
    return client;
  }

  async request<T extends AnySchema>(
    request: Parameters<Client["request"]>[0],
    schema: T,
    options?: RequestOptions,
  ): Promise<SchemaOutput<T>> {
    if (options?.onprogress) throw new Error("the plain-JSON client receives no progress: run this test on a streaming path");
    const message = {
      jsonrpc: "2.0" as const,
      id: this.nextId++,
      method: request.method,
      ...(request.params !== undefined && { params: request.params }),
    };
    const { message: answer, contentType } = await this.exchange(message, options?.signal);
    if (this.serverCapabilities?.tasks && mustBePlain(message) && !contentType.includes("application/json")) {
      throw new Error(`${request.method} was answered as ${contentType}, not as plain JSON`);
    }
    if (answer.error) throw new McpError(answer.error.code, answer.error.message, answer.error.data);
    const parsed = safeParse(schema, answer.result);
    if (!parsed.success) throw new Error(`${request.method}: the result does not match its schema: ${String(parsed.error)}`);
    return parsed.data;
  }

  getServerCapabilities(): ServerCapabilities | undefined {
    return this.serverCapabilities;
  }

  setRequestHandler: Client["setRequestHandler"] = () => {
    throw new Error("the plain-JSON client answers no server requests: run this test on a streaming path");
  };

  setNotificationHandler: Client["setNotificationHandler"] = () => {
    throw new Error("the plain-JSON client holds no stream for notifications: run this test on a streaming path");
  };

  async close(): Promise<void> {
    for (const controller of this.open) controller.abort(new Error("client closed"));
    this.open.clear();
  }

  /** POSTs one request and reads its response, from a JSON body or an event stream. */
  private async exchange(
    message: Message,
    signal?: AbortSignal,
  ): Promise<{ message: Message; contentType: string; sessionId: string | null }> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.open.add(controller);
    try {
      const response = await this.post(message, controller.signal);
      const contentType = response.headers.get("content-type") ?? "";
      const sessionId = response.headers.get("mcp-session-id");
      if (contentType.includes("text/event-stream")) {
        for await (const received of sseMessages(response)) {
          this.traffic.received.push(received);
          if (received.method !== undefined && received.id !== undefined) {
            throw new Error(`the server sent ${received.method} on the stream: the plain-JSON client answers no server requests`);
          }
          if (received.method === undefined && received.id === message.id) return { message: received, contentType, sessionId };
        }
        throw new Error(`the stream of ${message.method} ended without its response`);
      }
      const body = (await response.json()) as Message;
      this.traffic.received.push(body);
      return { message: body, contentType, sessionId };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.open.delete(controller);
      controller.abort();
    }
  }

  private async post(message: Message, signal?: AbortSignal): Promise<Response> {
    this.traffic.sent.push(message);
    return fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(this.sessionId !== undefined && { "mcp-session-id": this.sessionId, "mcp-protocol-version": LATEST_PROTOCOL_VERSION }),
      },
      body: JSON.stringify(message),
      ...(signal && { signal }),
    });
  }
}

function mustBePlain(message: Message): boolean {
  if (message.method === "tools/call") return message.params?.["task"] !== undefined;
  return PLAIN_METHODS.has(message.method ?? "");
}

/** The JSON-RPC messages of an SSE response, as they arrive. */
async function* sseMessages(response: Response): AsyncGenerator<Message> {
  if (!response.body) return;
  const splitter = new SseSplitter();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    for (const data of splitter.push(chunk)) yield JSON.parse(data) as Message;
  }
}
