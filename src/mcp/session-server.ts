import { randomUUID } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../core/caller.js";
import type { TaskEngine } from "../runtime/task-engine.js";
import type { TaskEra } from "./era.js";
import { SESSION_ERA } from "./eras.js";
import { toolsCall } from "./handlers/tools-call.js";
import { sessionFeatures, type SessionFeatures } from "./features/session-features.js";
import { toolsList } from "./handlers/tools-list.js";
import { callerOf } from "./owner.js";
import { looseRequest } from "./request-schemas.js";
import type { SessionContext } from "./era.js";
import { TaskProtocolServer, type OwnRequestExtra } from "./task-protocol-server.js";
import type { OperationRecorder } from "./tracing/operation-span.js";
import { servedNames } from "./tracing/served-names.js";
import type { TaskServerConfig } from "./task-server-config.js";
import type { RegisteredTool } from "./tool-definition.js";

/**
 * Capabilities (T-CAP-1/2): tools, logging (tools log through `ctx.log`), plus what the era
 * declares for tasks when they are on — and then `tools.idempotency` (SEP-3182): tools/call
 * honours `idempotencyKey` (docs/idempotency.md).
 */
export function serverCapabilities(config: TaskServerConfig, era: TaskEra = SESSION_ERA) {
  // The SDK's capability type predates SEP-3182; its schema keeps unknown members.
  const tools = (config.tasks ? { idempotency: {} } : {}) as { listChanged?: boolean };
  return { tools, logging: {}, ...(config.tasks && era.wire.serverCapabilities()) };
}

/** How a session server is connected. */
export interface SessionServerOptions {
  /**
   * Whether the transport has a standalone stream for notifications not tied to a request
   * (default true). False for a server that serves one request of a session whose standalone
   * stream is served elsewhere (cluster HTTP).
   */
  standaloneStream?: boolean;
  /** Whether the client has opened the standalone stream yet (see `StandaloneStreamOptions` in era.ts); default: always. */
  standaloneStreamOpened?: () => boolean;
  /** The peer of a connection that is one peer throughout (stdio, or one HTTP request's server). */
  peer?: string;
  /**
   * The peer of the request with this JSON-RPC id, for a session whose requests may each come
   * from elsewhere (Streamable HTTP); undefined falls back to `peer`.
   */
  requestPeer?: (requestId: RequestId) => string | undefined;
  /** Resources, prompts and completions the session serves besides tools (none without). */
  features?: SessionFeatures;
  /** Where each request's duration goes besides the OpenTelemetry meter (the `/metrics` histogram). */
  recordOperation?: OperationRecorder;
}

/**
 * One SDK server per connection (stdio) or per Streamable HTTP session, all sharing the engine.
 * `connectionId` defaults to the transport's session id, so tasks remember which session made them.
 * The era's method table is installed as it stands: a method it does not name is -32601.
 */
export function createSessionServer(
  engine: TaskEngine,
  tools: ReadonlyMap<string, RegisteredTool>,
  config: TaskServerConfig,
  connectionId: string = randomUUID(),
  options: SessionServerOptions = {},
): { server: TaskProtocolServer; session: SessionContext } {
  const era = SESSION_ERA;
  const server = new TaskProtocolServer(
    { name: config.name, version: config.version },
    {
      capabilities: serverCapabilities(config, era),
      logger: engine.logger,
      tracing: {
        operationTrace: era.wire.operationTrace,
        protocolVersion: era.id,
        // Only requests of a method with a handler are traced, so every method they name is served.
        served: servedNames({ tools, prompts: options.features?.registry.prompts }, () => true),
        ...(options.recordOperation && { record: options.recordOperation }),
      },
    },
  );
  const session: SessionContext = { server, engine, tools, config, era, connectionId, logThreshold: server.logThreshold };
  const callerFor = (auth: AuthInfo | undefined, requestId: RequestId): Caller =>
    callerOf(auth, config.bind, connectionId, options.requestPeer?.(requestId) ?? options.peer);

  server.setRequestHandler(looseRequest("tools/list"), async () => toolsList(session));
  server.setRequestHandler(looseRequest("logging/setLevel"), async (req) => era.setLogLevel(server.logThreshold, req.params));
  server.setRequestHandler(looseRequest("tools/call"), async (req, extra) =>
    toolsCall(session, req.params, {
      requestId: extra.requestId,
      signal: extra.signal,
      caller: callerFor(extra.authInfo, extra.requestId),
      closeStream: extra.closeSSEStream,
    }),
  );
  if (options.features) {
    const notifications = options.standaloneStream ?? true;
    const features = sessionFeatures(options.features, { store: engine.inspect, pageSize: config.pageSize }, server, { notifications });
    server.registerCapabilities(features.capabilities);
    for (const [method, run] of Object.entries(features.methods)) {
      server.setRequestHandler(looseRequest(method), async (req, extra) =>
        run(req.params, { signal: extra.signal, caller: callerFor(extra.authInfo, extra.requestId) }),
      );
    }
  }
  if (config.tasks) {
    for (const [method, { session: handler }] of Object.entries(era.methods)) {
      if (!handler) continue;
      // Continued, not awaited: no frame is kept while a request waits (a blocked tasks/result).
      server.setRequestHandler(looseRequest(method), (req, extra) =>
        handler(session, req.params, {
          requestId: extra.requestId,
          // Read when a handler asks: a request answered outside the SDK's Protocol makes its signal only then.
          get signal() {
            return extra.signal;
          },
          abandoned: (extra as Partial<OwnRequestExtra>).abandoned ?? extra.signal,
          caller: callerFor(extra.authInfo, extra.requestId),
        }).then(copied),
      );
    }
  }
  const detach = era.attachSession(session, {
    standaloneStream: options.standaloneStream ?? true,
    ...(options.standaloneStreamOpened && { standaloneStreamOpened: options.standaloneStreamOpened }),
  });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    detach();
    previousOnClose?.();
  };
  return { server, session };
}

/** A handler's result as its own object (the SDK's response then owns it). */
function copied(result: object): Record<string, unknown> {
  return { ...result };
}

/** Connects a session server to a transport (stdio, in-memory, or a Streamable HTTP session). */
export async function connectSession(
  engine: TaskEngine,
  tools: ReadonlyMap<string, RegisteredTool>,
  config: TaskServerConfig,
  transport: Transport,
  connectionId?: string,
  options: SessionServerOptions = {},
): Promise<TaskProtocolServer> {
  const { server } = createSessionServer(engine, tools, config, connectionId ?? transport.sessionId ?? randomUUID(), options);
  await server.connect(transport);
  return server;
}
