import type { TaskEngine } from "../runtime/task-engine.js";
import type { TaskEra } from "./era.js";
import type { TaskServerConfig } from "./task-server-config.js";
import type { RegisteredTool } from "./tool-definition.js";
import type { TaskProtocolServer } from "./task-protocol-server.js";

/** What every request handler of one connected session needs. */
export interface SessionContext {
  server: TaskProtocolServer;
  engine: TaskEngine;
  tools: ReadonlyMap<string, RegisteredTool>;
  config: TaskServerConfig;
  /** The protocol era this session speaks. */
  era: TaskEra;
  /** The session (or connection) id its tasks remember, so their notifications find it. */
  connectionId: string;
}
