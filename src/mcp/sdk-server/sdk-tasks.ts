import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { localEventBus } from "../../events/local-event-bus.js";
import { TaskEngine } from "../../runtime/task-engine.js";
import { resolveConfig, type TaskServerConfig } from "../task-server-config.js";
import type { RegisteredTool } from "../tool-definition.js";
import { toolTaskRunner } from "../tool-runner.js";
import { withRunningTask } from "./running-task.js";
import { installTaskHandlers, type TaskHost } from "./install-handlers.js";
import type { SdkTasksOptions } from "./sdk-tasks-options.js";
import { sdkToolAsTaskTool } from "./sdk-tool.js";

/**
 * Durable, owner-bound tasks for McpServers of the official SDK: one engine and store, given to
 * one McpServer by {@link withTasks}, or to each of several ({@link SdkTasks.attach}: one per
 * Streamable HTTP session, as the SDK's examples build them). The servers stay the user's: they
 * connect them to their own transports and close them; {@link SdkTasks.close} stops the engine
 * and closes the bus and the store.
 */
export class SdkTasks {
  readonly engine: TaskEngine;
  readonly config: TaskServerConfig;
  private readonly tools = new Map<string, RegisteredTool>();
  private started: Promise<void> | null = null;
  private readonly detachers = new Set<() => void>();

  constructor(private readonly options: SdkTasksOptions) {
    this.config = resolveConfig({ ...options, name: "mcp-tasks-sdk", version: "1", tasks: true });
    // What the engine does not take: the tools (the runner has them), the binding, the argument
    // limit and the fallback's options (the handlers apply them).
    const {
      tools: _tools,
      bind: _bind,
      maxArgumentBytes: _max,
      backgroundAfterMs: _after,
      fallbackRequired: _required,
      taskResultWaitMs: _wait,
      keepAliveMs: _keepAlive,
      store,
      bus,
      ...engineOptions
    } = options;
    this.engine = new TaskEngine({
      ...stripUndefined(engineOptions),
      store,
      bus: bus ?? localEventBus(),
      runner: withRunningTask(toolTaskRunner(this.tools)),
      ttl: this.config.ttl,
      pollIntervalMs: this.config.pollIntervalMs,
      pageSize: this.config.pageSize,
      maxActivePerOwner: this.config.maxActivePerOwner,
    });
  }

  /**
   * Gives `mcpServer` these tasks. Call after registering its tools and before connecting it. The
   * engine starts with the first server (tasks interrupted by a restart need its tools to re-run).
   * @throws Error when a tool of `options.tools` is not registered on it, or it is already connected.
   */
  attach(mcpServer: McpServer): this {
    const marked = new Set(Object.keys(this.options.tools));
    const host: TaskHost = { engine: this.engine, config: this.config, tools: this.tools, ready: () => this.start() };
    const detach = installTaskHandlers(mcpServer, host, marked, () => this.detachers.delete(detach));
    this.detachers.add(detach);
    // Checked and installed: from now on the engine runs this server's callbacks.
    for (const [name, how] of Object.entries(this.options.tools)) this.tools.set(name, sdkToolAsTaskTool(mcpServer, name, how));
    // Each request awaits the start and answers with its failure; this only keeps it from going unhandled.
    this.start().catch((error: unknown) => this.engine.logger.error({ err: error }, "the task engine did not start"));
    return this;
  }

  /** Starts the engine (recovers interrupted tasks, starts the expiry sweeper). Idempotent. */
  start(): Promise<void> {
    this.started ??= this.engine.start();
    return this.started;
  }

  /** Stops the engine (running tasks fail, retryable ones re-run on the next start), then closes the bus and the store. */
  async close(): Promise<void> {
    await this.engine.close();
    for (const detach of this.detachers) detach();
    this.detachers.clear();
    await this.engine.bus.close();
    await this.engine.store.close();
  }
}

/** Creates the engine of {@link SdkTasks} without giving it to a server yet. */
export function createSdkTasks(options: SdkTasksOptions): SdkTasks {
  return new SdkTasks(options);
}

/**
 * Makes the tools named in `options.tools` of an existing SDK `McpServer` task-capable, with
 * durable tasks in `options.store` (protocol revision 2025-11-25). Call after registering its
 * tools and before `mcpServer.connect(transport)`. Returns the {@link SdkTasks} to close on
 * shutdown (and to {@link SdkTasks.attach} further McpServers, one per HTTP session).
 */
export function withTasks(mcpServer: McpServer, options: SdkTasksOptions): SdkTasks {
  return createSdkTasks(options).attach(mcpServer);
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
