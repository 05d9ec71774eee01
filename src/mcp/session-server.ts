import { randomUUID } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Caller } from "../core/caller.js";
import type { TaskEngine } from "../runtime/task-engine.js";
import { tasksCancel } from "./handlers/tasks-cancel.js";
import { tasksGet } from "./handlers/tasks-get.js";
import { tasksList } from "./handlers/tasks-list.js";
import { tasksResult } from "./handlers/tasks-result.js";
import { toolsCall } from "./handlers/tools-call.js";
import { toolsList } from "./handlers/tools-list.js";
import { callerOf } from "./owner.js";
import { currentRequestPeer } from "./request-peer.js";
import * as R from "./request-schemas.js";
import type { SessionContext } from "./session-context.js";
import { SessionLink } from "./session-link.js";
import { TaskProtocolServer } from "./task-protocol-server.js";
import type { TaskServerConfig } from "./task-server-config.js";
import type { RegisteredTool } from "./tool-definition.js";

/** Capabilities (T-CAP-1/2): tools, plus tasks.list, tasks.cancel, tasks.requests.tools.call when on. */
export function serverCapabilities(config: TaskServerConfig) {
  return {
    tools: {},
    ...(config.tasks && { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),
  };
}

/** How a session server is connected. */
export interface SessionServerOptions {
  /**
   * Whether the transport has a standalone stream for notifications not tied to a request
   * (default true). False for a server that serves one request of a session whose standalone
   * stream is served elsewhere (cluster HTTP): see {@link SessionLink}.
   */
  standaloneStream?: boolean;
  /** The peer of a connection that has one throughout (stdio); HTTP requests carry their own. */
  peer?: string;
}

/**
 * One SDK server per connection (stdio) or per Streamable HTTP session, all sharing the engine.
 * `connectionId` defaults to the transport's session id, so tasks remember which session made them.
 */
export function createSessionServer(
  engine: TaskEngine,
  tools: ReadonlyMap<string, RegisteredTool>,
  config: TaskServerConfig,
  connectionId: string = randomUUID(),
  options: SessionServerOptions = {},
): { server: TaskProtocolServer; session: SessionContext } {
  const server = new TaskProtocolServer({ name: config.name, version: config.version }, { capabilities: serverCapabilities(config), logger: engine.logger });
  const link = new SessionLink(connectionId, server, engine, options.standaloneStream ?? true);
  const session: SessionContext = { server, engine, tools, config, link };
  const callerFor = (auth: AuthInfo | undefined): Caller => callerOf(auth, config.bind, connectionId, currentRequestPeer() ?? options.peer);

  server.setRequestHandler(R.ToolsListRequest, async () => toolsList(session));
  server.setRequestHandler(R.ToolsCallRequest, async (req, extra) =>
    toolsCall(session, req.params, { requestId: extra.requestId, signal: extra.signal, caller: callerFor(extra.authInfo) }),
  );
  if (config.tasks) {
    server.setRequestHandler(R.TasksGetRequest, async (req, extra) => ({ ...(await tasksGet(engine, req.params, callerFor(extra.authInfo))) }));
    server.setRequestHandler(R.TasksListRequest, async (req, extra) => tasksList(engine, req.params, callerFor(extra.authInfo)));
    server.setRequestHandler(R.TasksCancelRequest, async (req, extra) => ({
      ...(await tasksCancel(engine, req.params, callerFor(extra.authInfo))),
    }));
    server.setRequestHandler(R.TasksResultRequest, async (req, extra) =>
      tasksResult(session, req.params, callerFor(extra.authInfo), { requestId: extra.requestId, signal: extra.signal }),
    );
  }
  link.attach();
  const previousOnClose = server.onclose;
  server.onclose = () => {
    link.detach();
    previousOnClose?.();
  };
  return { server, session };
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
