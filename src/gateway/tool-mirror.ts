import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../core/logger.js";
import type { TaskServer } from "../mcp/task-server.js";
import { crashRetries } from "./crash-retry.js";
import { upstreamRunsAsTask } from "./upstream-task.js";
import type { GatewayConfig } from "./gateway-config.js";
import type { UpstreamConnection } from "./upstream-connection.js";
import type { UpstreamCaller } from "./upstream-pool.js";

/** Any arguments object: the upstream checks arguments against its own schema, listed as it is. */
const ANY_ARGUMENTS = z.record(z.string(), z.unknown());

/** Upstream tools listed at most (pages followed), so a runaway listing cannot exhaust the gateway. */
const MAX_TOOLS = 10_000;

/** All of the upstream's tools, following `nextCursor`. */
export async function listUpstreamTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined && tools.length < MAX_TOOLS);
  return tools;
}

/**
 * The upstream's tools as tools of the gateway's TaskServer: each listed with the upstream's
 * name, schemas, annotations, icons and `_meta`, and the `execution.taskSupport`, ttl, recovery
 * and immediate response the gateway config gives it; its handler calls the upstream.
 * {@link sync} brings the set up to date (at start, after a restart, on `list_changed`).
 */
export class ToolMirror {
  /** What each mirrored tool was registered from, to tell a changed tool from an unchanged one. */
  private readonly mirrored = new Map<string, string>();

  constructor(
    private readonly app: TaskServer,
    private readonly upstream: UpstreamConnection,
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
    /** Who runs the calls: the shared connection, or one process per principal. */
    private readonly calls: UpstreamCaller = upstream,
  ) {}

  get names(): string[] {
    return [...this.mirrored.keys()];
  }

  /** Registers new and changed upstream tools, removes those gone. */
  async sync(client: Client): Promise<void> {
    const tools = await listUpstreamTools(client);
    const seen = new Set<string>();
    for (const tool of tools) {
      seen.add(tool.name);
      const asTask = upstreamRunsAsTask(client, tool);
      const key = JSON.stringify({ tool, asTask });
      if (this.mirrored.get(tool.name) === key) continue;
      if (this.mirrored.has(tool.name)) this.app.removeTool(tool.name);
      this.register(tool, asTask);
      this.mirrored.set(tool.name, key);
    }
    for (const name of [...this.mirrored.keys()]) {
      if (seen.has(name)) continue;
      this.app.removeTool(name);
      this.mirrored.delete(name);
    }
    this.logger.debug({ upstream: this.upstream.name, tools: this.names }, "upstream tools mirrored");
  }

  /**
   * `asTask`: the upstream runs the tool as a task of its own, which the gateway follows; its
   * recovery is then "resume" unless configured, since re-attaching to the upstream task after a
   * gateway restart repeats nothing.
   */
  private register(tool: Tool, asTask: boolean): void {
    const config = this.config.tool(tool.name);
    const name = tool.name;
    const call = { timeoutMs: config.timeoutMs, retries: crashRetries(this.config, tool), asTask, ttl: config.ttl };
    const recovery = config.recovery ?? (asTask ? "resume" : undefined);
    this.app.tool(
      name,
      {
        input: ANY_ARGUMENTS,
        listedSchemas: { input: tool.inputSchema, ...(tool.outputSchema !== undefined && { output: tool.outputSchema }) },
        ...(tool.title !== undefined && { title: tool.title }),
        ...(tool.description !== undefined && { description: tool.description }),
        ...(tool.annotations !== undefined && { annotations: tool.annotations }),
        ...(tool.icons !== undefined && { icons: tool.icons }),
        ...(tool._meta !== undefined && { _meta: tool._meta }),
        taskSupport: config.taskSupport,
        ...(recovery !== undefined && { recovery }),
        // The handler follows the upstream task beside the questions it relays: parking would let that go.
        park: false,
        ...(config.ttl !== undefined && { defaultTtlMs: config.ttl }),
        ...(config.immediateResponse !== undefined && { immediateResponse: config.immediateResponse }),
        ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
        ...(config.dedupe !== undefined && { dedupe: config.dedupe }),
      },
      (args, ctx) => this.calls.callTool(name, args, ctx, call),
    );
  }
}
