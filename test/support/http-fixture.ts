import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import type { EventBus } from "../../src/events/event-bus.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../src/http/http-server.js";
import type { HttpRoute } from "../../src/http/route-table.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../src/mcp/task-server.js";
import { TaskMetrics } from "../../src/metrics/task-metrics.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { Recorder } from "./recorder.js";
import { SseSplitter } from "./sse.js";

/** A JSON-RPC message as it travelled on the wire (loosely typed: tests inspect raw fields). */
export type WireMessage = {
  jsonrpc: "2.0";
  id?: string | number;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** One HTTP request of the SDK client transport and what came back on its response. */
export interface Exchange {
  method: string;
  /** The POSTed JSON-RPC message (parsed), undefined for GET/DELETE. */
  body: WireMessage | undefined;
  status: number;
  contentType: string | null;
  /** JSON-RPC messages that arrived on this response: SSE events, or the JSON body. */
  messages: WireMessage[];
}

/** A message the client received, with the HTTP exchange (stream) that carried it. */
export interface Received {
  message: WireMessage;
  exchange: Exchange;
}

/**
 * A fetch for the SDK client transport that records every exchange and every message received,
 * per response stream, without changing what the SDK sees (response bodies are teed).
 */
export function wireTap(inner: FetchLike = fetch): { fetch: FetchLike; exchanges: Recorder<Exchange>; received: Recorder<Received> } {
  const exchanges = new Recorder<Exchange>();
  const received = new Recorder<Received>();
  const tapped: FetchLike = async (url, init) => {
    const method = init?.method ?? "GET";
    const body = typeof init?.body === "string" ? (parseJson(init.body) as WireMessage | undefined) : undefined;
    const response = await inner(url, init);
    const contentType = response.headers.get("content-type");
    const exchange: Exchange = { method, body, status: response.status, contentType, messages: [] };
    exchanges.push(exchange);
    if (!response.body) return response;
    const [mine, theirs] = response.body.tee();
    const onMessage = (message: WireMessage): void => {
      exchange.messages.push(message);
      received.push({ message, exchange });
    };
    void (contentType?.includes("text/event-stream") ? readSse(mine, onMessage) : readJson(mine, onMessage));
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: tapped, exchanges, received };
}

async function readSse(stream: ReadableStream<Uint8Array>, onMessage: (m: WireMessage) => void): Promise<void> {
  const splitter = new SseSplitter();
  try {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      for (const data of splitter.push(chunk)) {
        const parsed = parseJson(data);
        if (parsed !== undefined) onMessage(parsed as WireMessage);
      }
    }
  } catch {
    // The stream was aborted (client closed): nothing more to record.
  }
}

async function readJson(stream: ReadableStream<Uint8Array>, onMessage: (m: WireMessage) => void): Promise<void> {
  try {
    const text = await new Response(stream).text();
    const parsed = parseJson(text);
    if (Array.isArray(parsed)) for (const m of parsed) onMessage(m as WireMessage);
    else if (parsed !== undefined) onMessage(parsed as WireMessage);
  } catch {
    // aborted
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The raw answer of an HTTP request made outside the SDK. */
export interface RawResponse {
  status: number;
  contentType: string | null;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: WireMessage | undefined;
}

/** POSTs `body` (a message, or raw text/stream) to the MCP endpoint and reads the whole answer. */
export async function rawPost(
  url: string | URL,
  body: unknown,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<RawResponse> {
  const payload = typeof body === "string" || body instanceof ReadableStream ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: payload,
    ...(payload instanceof ReadableStream && { duplex: "half" }),
    ...init,
  } as RequestInit);
  return readRaw(response);
}

/** A bodiless request (GET, DELETE) to the MCP endpoint; the body is not read for event streams. */
export async function rawRequest(url: string | URL, method: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const response = await fetch(url, { method, headers: { accept: "application/json, text/event-stream", ...headers } });
  if (response.headers.get("content-type")?.includes("text/event-stream")) {
    await response.body?.cancel();
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      headers: response.headers,
      text: "",
      json: undefined,
    };
  }
  return readRaw(response);
}

async function readRaw(response: Response): Promise<RawResponse> {
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    headers: response.headers,
    text,
    json: parseJson(text) as WireMessage | undefined,
  };
}

/** One SDK client connected over Streamable HTTP, with its wire tap. */
export interface HttpClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  exchanges: Recorder<Exchange>;
  received: Recorder<Received>;
  /** Errors the SDK transport/protocol reported. */
  errors: Error[];
  sessionId: string;
  /** Headers for raw requests on this client's session (session id, protocol version, token). */
  headers(): Record<string, string>;
  /** Messages received with this method (notifications, server requests). */
  messagesOf(method: string): Received[];
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
  capabilities?: ClientCapabilities;
  /**
   * Wait until the client's standalone GET SSE stream is open (the SDK opens it, unawaited,
   * after `notifications/initialized`). Default true: notifications sent on it before it is
   * open would be dropped (no event store).
   */
  waitForGetStream?: boolean;
  /** What actually sends the HTTP requests (default: the global fetch), e.g. a test balancer. */
  fetch?: FetchLike;
}

export interface HttpServerFixture {
  app: TaskServer;
  http: HttpHandle;
  url: URL;
  connect(options?: ConnectOptions): Promise<HttpClient>;
  close(): Promise<void>;
}

/** The demo tools served by {@link serveHttp} on 127.0.0.1, port 0, with SDK clients to connect. */
export async function startHttpServer(
  options: { app?: Partial<TaskServerOptions>; http?: HttpOptions; routes?: (app: TaskServer) => HttpRoute[] } = {},
): Promise<HttpServerFixture> {
  const app = registerDemoTools(
    createTaskServer({ name: "e2e", version: "0.0.0", store: memoryStore(), metrics: new TaskMetrics(), ...options.app }),
  );
  const routes = options.routes?.(app);
  const http = await serveHttp(app, { port: 0, host: "127.0.0.1", ...options.http, ...(routes && { routes }) });
  const url = new URL(http.url);
  const clients: HttpClient[] = [];

  const connect = async (connectOptions: ConnectOptions = {}): Promise<HttpClient> => {
    const connection = await connectHttpClient(url, connectOptions);
    clients.push(connection);
    return connection;
  };

  return {
    app,
    http,
    url,
    connect,
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      await http.close();
      await app.close();
    },
  };
}

/** Connects an SDK client over Streamable HTTP to `url`, with a wire tap; the caller closes it. */
export async function connectHttpClient(url: URL | string, connectOptions: ConnectOptions = {}): Promise<HttpClient> {
  const tap = wireTap(connectOptions.fetch);
  const auth: Record<string, string> = connectOptions.token === undefined ? {} : { Authorization: `Bearer ${connectOptions.token}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: tap.fetch,
    requestInit: { headers: auth },
    // A test never wants a background reconnection loop outliving it.
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
  });
  const client = new Client(
    { name: "e2e-client", version: "0.0.0" },
    { capabilities: connectOptions.capabilities ?? { elicitation: { form: {} }, sampling: {} } },
  );
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  if (connectOptions.waitForGetStream ?? true) {
    await tap.exchanges.waitFor((e) => e.method === "GET" && e.status === 200, "the client's GET SSE stream to open");
  }
  const sessionId = transport.sessionId;
  if (!sessionId) throw new Error("the server assigned no session id");
  const connection: HttpClient = {
    client,
    transport,
    exchanges: tap.exchanges,
    received: tap.received,
    errors,
    sessionId,
    headers: () => ({
      "mcp-session-id": sessionId,
      "mcp-protocol-version": transport.protocolVersion ?? "2025-11-25",
      ...(connectOptions.token !== undefined && { authorization: `Bearer ${connectOptions.token}` }),
    }),
    messagesOf: (method) => tap.received.filter((r) => r.message.method === method),
    close: () => client.close(),
  };
  return connection;
}

/** `_meta["io.modelcontextprotocol/related-task"].taskId` of a message's params or result, if any. */
export function relatedTaskId(message: WireMessage): string | undefined {
  const meta = (message.params?._meta ?? (message.result as { _meta?: Record<string, unknown> } | undefined)?._meta) as
    Record<string, { taskId?: string } | undefined> | undefined;
  return meta?.["io.modelcontextprotocol/related-task"]?.taskId;
}

/** Live subscriptions of a {@link countingBus}: observers (`onAny`) and per-task listeners. */
export interface Subscriptions {
  any: number;
  byTask: Map<string, number>;
}

/**
 * The in-process bus, counting live subscriptions: a session server that still listens after its
 * session closed, or a request handler that still waits after its stream closed, shows up here.
 * Every change is recorded, so tests wait for a state instead of polling.
 */
export function countingBus(): { bus: EventBus; changes: Recorder<Subscriptions>; now(): Subscriptions } {
  const inner = localEventBus();
  const state: Subscriptions = { any: 0, byTask: new Map() };
  const changes = new Recorder<Subscriptions>();
  const snapshot = (): Subscriptions => ({ any: state.any, byTask: new Map(state.byTask) });
  const counted = (off: () => void, change: (delta: number) => void): (() => void) => {
    change(1);
    changes.push(snapshot());
    let done = false;
    return () => {
      off();
      if (done) return;
      done = true;
      change(-1);
      changes.push(snapshot());
    };
  };
  const bus: EventBus = {
    publish: (event) => inner.publish(event),
    onAny: (listener) => counted(inner.onAny(listener), (d) => (state.any += d)),
    onTask: (taskId, listener) =>
      counted(inner.onTask(taskId, listener), (d) => {
        const n = (state.byTask.get(taskId) ?? 0) + d;
        if (n === 0) state.byTask.delete(taskId);
        else state.byTask.set(taskId, n);
      }),
    close: () => inner.close(),
  };
  return { bus, changes, now: snapshot };
}
