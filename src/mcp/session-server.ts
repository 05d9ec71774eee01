import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { TaskEngine } from "../runtime/task-engine.js";
import { tasksCancel } from "./handlers/tasks-cancel.js";
import { tasksGet } from "./handlers/tasks-get.js";
import { tasksList } from "./handlers/tasks-list.js";
import { tasksResult } from "./handlers/tasks-result.js";
import { toolsCall } from "./handlers/tools-call.js";
import { toolsList } from "./handlers/tools-list.js";
import { ownerFromAuth } from "./owner.js";
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
  const server = new TaskProtocolServer({ name: config.name, version: config.version }, { capabilities: serverCapabilities(config) });
  const link = new SessionLink(connectionId, server, engine, options.standaloneStream ?? true);
  const session: SessionContext = { server, engine, tools, config, link };

  server.setRequestHandler(R.ToolsListRequest, async () => toolsList(session));
  server.setRequestHandler(R.ToolsCallRequest, async (req, extra) =>
    toolsCall(session, req.params, { requestId: extra.requestId, signal: extra.signal, owner: ownerFromAuth(extra.authInfo) }),
  );
  if (config.tasks) {
    server.setRequestHandler(R.TasksGetRequest, async (req, extra) => ({ ...(await tasksGet(engine, req.params, ownerFromAuth(extra.authInfo))) }));
    server.setRequestHandler(R.TasksListRequest, async (req, extra) => tasksList(engine, req.params, ownerFromAuth(extra.authInfo)));
    server.setRequestHandler(R.TasksCancelRequest, async (req, extra) => ({
      ...(await tasksCancel(engine, req.params, ownerFromAuth(extra.authInfo))),
    }));
    server.setRequestHandler(R.TasksResultRequest, async (req, extra) =>
      tasksResult(session, req.params, ownerFromAuth(extra.authInfo), { requestId: extra.requestId, signal: extra.signal }),
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
