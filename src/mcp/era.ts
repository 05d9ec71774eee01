import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { AbortWatch } from "../core/abort-watch.js";
import type { Caller } from "../core/caller.js";
import type { TaskEngine } from "../runtime/task-engine.js";
import type { LogThreshold } from "./logging/log-level.js";
import type { LooseParams } from "./request-schemas.js";
import type { TaskServerConfig } from "./task-server-config.js";
import type { RegisteredTool } from "./tool-definition.js";
import type { FeatureRegistry } from "./features/feature-registry.js";
import type { OperationRecorder } from "./tracing/operation-span.js";
import type { SessionWire, WireCodec } from "./wire/wire-codec.js";

export type { OperationTrace } from "./wire/wire-codec.js";

/**
 * The seam between the engine and a protocol revision. What a revision's wire looks like — its
 * Task and CreateTaskResult shapes, its notifications, its `_meta` — is its pure codec
 * (`src/mcp/wire/rev…/`, its `wire` member); what binds the revision to the engine and the
 * transport — its task methods, how it carries a task's questions and notifications to a session,
 * how it asks the client — is the binding folder that implements this interface (`rev2025-11-25/`).
 * The engine speaks only operations (create, get, list, cancel, watch, pendingInputs, respond).
 * A method an era's table does not name is not served in that era (-32601): membership is the
 * whole story, so serving a new revision is its folders and one line in `era-registry.ts`.
 */
export interface TaskEra {
  /** Tells a session era from a stateless one in the registry's list. */
  readonly kind: "session";
  /** The protocol revision (or extension) this era speaks, for logs and records. */
  readonly id: string;
  /**
   * This era's wire: the pure codec of its requests, results, errors and notifications
   * (`src/mcp/wire/rev…/`): how a call asks for a task, what a created task answers, its
   * capabilities, notifications, related-task `_meta`, its own error codes. Fronts read and build
   * the era's messages through it; what follows binds the era to the engine and the transport.
   */
  readonly wire: SessionWire;
  /**
   * This era's task methods, one table: each names how a session server, a receiver without a
   * session and the plain-JSON path answer it. A front serves a method whose entry has its kind.
   */
  readonly methods: Readonly<Record<string, TaskMethod>>;
  /**
   * Starts carrying task notifications to one connected session (status, progress); returns
   * what stops it, called when the session closes.
   */
  attachSession(session: SessionContext, options: StandaloneStreamOptions): () => void;
  /**
   * `logging/setLevel`: the session hears messages at the level its params name and above from
   * then on; what the request answers. An unknown level is the requestor's error (-32602).
   */
  setLogLevel(threshold: LogThreshold, params: LooseParams): Record<string, never>;
  /**
   * Asks the session's client `method` during a plain call, on that call's stream: as a task the
   * client hosts where it declared it can (waiting for the task's outcome), else plainly.
   */
  requestOfClient<T>(
    server: Server,
    method: string,
    params: Record<string, unknown>,
    schema: z.ZodType<T>,
    options: ClientRequestOptions,
  ): Promise<T>;
}

/** How {@link TaskEra.requestOfClient} asks. */
export interface ClientRequestOptions {
  /** The request whose stream carries the question. */
  relatedRequestId: RequestId;
  /** Aborts the question: a task the client hosts for it is cancelled. */
  signal: AbortSignal;
  /** The ttl asked of the client's task. */
  ttl?: number;
}

/** Whether, and when, a session server may send on its session's standalone stream. */
export interface StandaloneStreamOptions {
  /** False for a server serving one request of a session whose standalone stream is fed elsewhere. */
  standaloneStream: boolean;
  /**
   * Whether the client has opened that stream yet (Streamable HTTP: a GET). Until it has, what
   * would go there is not built or sent at all: no client could receive it, nor resume it (the
   * event id to resume from comes on that stream). Default: always (stdio, in-memory).
   */
  standaloneStreamOpened?: () => boolean;
}

/** What an era's handlers reach besides the request: the engine, the tools, the configuration. */
export interface EraHost {
  engine: TaskEngine;
  tools: ReadonlyMap<string, RegisteredTool>;
  config: TaskServerConfig;
  era: TaskEra;
  /** Resources, resource templates and prompts, when the server has a registry for them. */
  features?: FeatureRegistry;
  /** Where each request's duration goes besides the OpenTelemetry meter (the `/metrics` histogram). */
  recordOperation?: OperationRecorder;
}

/** One request as a session server received it. */
export interface SessionRequest {
  caller: Caller;
  requestId: RequestId;
  signal: AbortSignal;
  /** The same abort, for a wait that only needs to hear it (see {@link PlainRequest.abandoned}). */
  abandoned: AbortWatch;
}

/** A request to a receiver: who asks, and the signal that aborts when they give up. */
export interface ReceiverRequest {
  caller: Caller;
  signal: AbortSignal;
}

export type ReceiverMethod = (engine: TaskEngine, params: LooseParams, request: ReceiverRequest) => Promise<object>;

export type SessionMethod = (session: SessionContext, params: LooseParams, request: SessionRequest) => Promise<object>;

/** One task method of an era, as each kind of front answers it. */
export interface TaskMethod {
  /** How a session server answers it (installed only when task support is on). */
  session?: SessionMethod;
  /**
   * How a party whose tasks never ask anything back (a client hosting sampling and elicitation as
   * tasks) answers it: with nothing but the engine, no session.
   */
  receiver?: ReceiverMethod;
  /**
   * How it is answered as one plain JSON response on HTTP, without a session server or a stream
   * for the request (T-GET-4: a client polling asked for no stream). It may still find that this
   * request needs a stream and say so with {@link NEEDS_STREAM}, having written nothing.
   */
  plain?: PlainMethod;
}

/** One request answered without a session server. */
export interface PlainRequest {
  caller: Caller;
  /** The session the request came on (tasks remember it for their notifications). */
  sessionId: string;
  /** The client's capabilities, as declared when the session began. */
  clientCapabilities: ClientCapabilities | undefined;
  /** Aborts when the requestor hangs up. */
  signal: AbortSignal;
  /**
   * The same abort, for a wait that only needs to hear it: no `AbortSignal` is made for it (see
   * {@link AbortWatch}).
   */
  abandoned: AbortWatch;
  /**
   * True when the session's own stream, not a request's, carries the notifications of the
   * session's own tasks (shared sessions: the GET stream, fed by the bus, on whichever node holds
   * it). False when they would travel on the stream of a waiting request (local sessions).
   */
  sessionStreamCarriesOwnTasks: boolean;
}

/** Said by a plain method that found the request needs a stream; nothing has been written or consumed. */
export const NEEDS_STREAM: unique symbol = Symbol("needs a stream");

export type PlainMethod = (host: EraHost, params: LooseParams, request: PlainRequest) => Promise<object | typeof NEEDS_STREAM>;

/** What every request handler of one connected session needs. */
export interface SessionContext {
  /** Our TaskProtocolServer, or the SDK `Server` of a user's McpServer given tasks (sdk-server/). */
  server: Server;
  engine: TaskEngine;
  tools: ReadonlyMap<string, RegisteredTool>;
  config: TaskServerConfig;
  /** The protocol era this session speaks. */
  era: TaskEra;
  /** The session (or connection) id its tasks remember, so their notifications find it. */
  connectionId: string;
  /** The lowest log level this session hears (`logging/setLevel`); everything until it is set. */
  logThreshold: LogThreshold;
}

/** What a stateless era's handlers reach: the engine, the tools, the configuration (no session, no SDK server). */
export type StatelessHost = Pick<EraHost, "engine" | "tools" | "config" | "features" | "recordOperation">;

/** The HTTP request one stateless message came in, as far as an era needs it. */
export interface StatelessHttpRequest {
  /** Header values by lower-case name (X-HTTP-5: names compare case-insensitively). */
  headers: Readonly<Record<string, string | undefined>>;
  /** The caller, bound exactly as a session's requests are (same owner rules). */
  caller: Caller;
  /** Aborts when the requestor hangs up. */
  signal: AbortSignal;
  /** The same abort, for a wait that only needs to hear it (see {@link PlainRequest.abandoned}). */
  abandoned: AbortWatch;
}

/**
 * A stream answer, pushed rather than pulled: started with the function that writes one JSON-RPC
 * message (its notifications, then possibly its response), it settles when the stream ends, or
 * soon after the requestor hangs up (the request's signal aborts; nothing is written after that).
 * Pushed so that a stream that waits long (a subscription) keeps no suspended generator or loop
 * per request between its messages.
 */
export type MessageStream = (send: (message: Record<string, unknown>) => void) => Promise<void>;

/**
 * The answer to one stateless message: a JSON-RPC response; a {@link MessageStream}; or nothing
 * (a notification).
 */
export type StatelessAnswer =
  | { id: string | number | null; result: Record<string, unknown> }
  | { id: string | number | null; error: { code: number; message: string; data?: unknown } }
  | { id: string | number; stream: MessageStream }
  | null;

/**
 * A protocol era without sessions (2026-07-28, SEP-2575): every request carries its own envelope
 * (protocol version, client capabilities) and is answered on its own, with no `initialize` and
 * no state between requests but the store. Beside the session era, not instead of it: the HTTP
 * endpoint asks {@link claims} before it looks for a session.
 */
export interface StatelessEra {
  /** Tells a stateless era from a session era in the registry's list. */
  readonly kind: "stateless";
  /** The protocol revision this era speaks. */
  readonly id: string;
  /** This era's wire: the pure codec of its requests, results, errors and notifications (`src/mcp/wire/rev…/`). */
  readonly wire: WireCodec;
  /** Whether this era serves a POST, from its MCP-Protocol-Version header or (without a session id) its body. */
  claims(request: { protocolVersionHeader: string | undefined; hasSessionId: boolean; body: unknown }): boolean;
  /** Answers one JSON-RPC message; never throws for anything the message or the handlers did. */
  answer(host: StatelessHost, body: unknown, request: StatelessHttpRequest): Promise<StatelessAnswer>;
}

/** What an era folder registers (`era-registry.ts`): a session era or a stateless one. */
export type ServerEra = TaskEra | StatelessEra;
