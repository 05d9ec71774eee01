import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/logger.js";
import type { TaskServer } from "../mcp/task-server.js";
import type { GatewayConfig } from "./gateway-config.js";
import { PromptMirror } from "./prompt-mirror.js";
import { ResourceMirror } from "./resource-mirror.js";
import { ToolMirror } from "./tool-mirror.js";
import { UpstreamConnection } from "./upstream-connection.js";
import { UpstreamPool, type PerPrincipalOptions } from "./upstream-pool.js";
import type { UpstreamTarget } from "./upstream-target.js";

/** Options of {@link attachGateway}. */
export interface GatewayOptions {
  upstream: UpstreamTarget;
  config: GatewayConfig;
  logger: Logger;
  /** Longest an upstream call may go without an answer or progress (ms); a tool's `timeoutMs` overrides it. */
  timeoutMs: number;
  /** First delay before restarting a lost upstream (ms); doubles per failed attempt. */
  restartDelayMs?: number;
  /**
   * One upstream process per principal for tool calls (stdio upstreams only); the gateway's own
   * connection still lists the tools and serves resources, prompts and completions.
   */
  perPrincipal?: PerPrincipalOptions;
  /** The roots the upstream is told when no requestor is asked (default: the config file's `roots`). */
  roots?: Root[];
}

/** A running gateway: its upstream connection and the mirror of its tools (resources and prompts are mirrored too). */
export interface Gateway {
  upstream: UpstreamConnection;
  /** The per-principal processes, when `perPrincipal` is on. */
  pool: UpstreamPool | null;
  tools: ToolMirror;
  close(): Promise<void>;
}

/**
 * Connects to the upstream MCP server and offers what it has through `app` (call before
 * `app.start()`, so interrupted tasks find their tools): its tools as task-capable tools,
 * its resources, resource templates and prompts passed through (reads, renderings and
 * completions answered by the upstream); each list re-listed on the upstream's `list_changed`
 * and after every restart of the upstream.
 * A first connection that fails throws: a gateway without its upstream does not start.
 */
export async function attachGateway(app: TaskServer, options: GatewayOptions): Promise<Gateway> {
  const upstreamOptions = {
    logger: options.logger,
    timeoutMs: options.timeoutMs,
    ...(options.restartDelayMs !== undefined && { restartDelayMs: options.restartDelayMs }),
    roots: options.roots ?? options.config.roots(),
  };
  const upstream = new UpstreamConnection(options.upstream, upstreamOptions);
  if (options.perPrincipal && options.upstream.kind !== "stdio")
    throw new Error("one upstream process per principal needs a stdio upstream");
  const pool = options.perPrincipal ? new UpstreamPool(options.upstream, upstreamOptions, options.perPrincipal, options.logger) : null;
  const tools = new ToolMirror(app, upstream, options.config, options.logger, pool ?? upstream);
  const resources = new ResourceMirror(app, upstream);
  const prompts = new PromptMirror(app, upstream);
  resources.forwardSubscriptions(options.logger);
  upstream.onConnected(async (client) => {
    await tools.sync(client);
    await resources.sync(client);
    await prompts.sync(client);
  });
  const relist = (what: string, sync: (client: Client) => Promise<void>) => () => {
    void upstream
      .client()
      .then(sync)
      .catch((error: unknown) =>
        options.logger.warn(
          { upstream: upstream.name, error: error instanceof Error ? error.message : String(error) },
          `re-listing upstream ${what} failed`,
        ),
      );
  };
  upstream.onNotification(
    ToolListChangedNotificationSchema,
    relist("tools", (client) => tools.sync(client)),
  );
  upstream.onNotification(
    ResourceListChangedNotificationSchema,
    relist("resources", (client) => resources.sync(client)),
  );
  upstream.onNotification(
    PromptListChangedNotificationSchema,
    relist("prompts", (client) => prompts.sync(client)),
  );
  upstream.onNotification(ResourceUpdatedNotificationSchema, (notification) => void app.resourceUpdated(notification.params.uri));
  await upstream.start();
  return {
    upstream,
    pool,
    tools,
    async close() {
      await pool?.close();
      await upstream.close();
    },
  };
}
