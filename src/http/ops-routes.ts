import type { TaskServer } from "../mcp/task-server.js";
import { bearerTokenOf, SecretSet } from "./bearer-token.js";
import { sendJson } from "./json-rpc-response.js";
import { HttpFailure } from "./rpc-http-errors.js";
import type { HttpRoute } from "./route-table.js";

/** Options of the operations endpoints. */
export interface OpsOptions {
  /**
   * When set, /metrics requires `Authorization: Bearer <metricsToken>`. Unset, /metrics is open:
   * it holds counts by tool name only (no task ids, owners, arguments or results), and a scraper
   * then needs no credential that could also read or cancel tasks.
   */
  metricsToken?: string;
  /** Longest the readiness probe waits for the store. Default 2000 ms. */
  readyTimeoutMs?: number;
}

// An id no task has (task ids are UUIDs): reading it proves the store answers queries.
const PROBE_ID = "readyz-probe";

/**
 * `/healthz` (the process serves HTTP), `/readyz` (the store answers a query in time; SQLite
 * migrates on open, so a store that answers has its schema; 503 "draining" once the server drains,
 * so a balancer stops sending it requests while it lets running tasks finish — /healthz stays
 * 200 meanwhile: the process is alive and must not be killed early) and `/metrics` (Prometheus text).
 * Health probes are open: orchestrators call them without credentials and they reveal nothing.
 */
export function opsRoutes(app: TaskServer, options: OpsOptions = {}): HttpRoute[] {
  const metricsTokens = new SecretSet(options.metricsToken === undefined ? [] : [options.metricsToken]);
  const readyTimeoutMs = options.readyTimeoutMs ?? 2000;
  const metrics = app.metrics;
  const routes: HttpRoute[] = [
    {
      path: "/healthz",
      methods: { GET: (_req, res) => sendJson(res, 200, { status: "ok" }, { "cache-control": "no-store" }) },
    },
    {
      path: "/readyz",
      methods: {
        GET: async (_req, res, ctx) => {
          if (app.engine.draining) {
            sendJson(
              res,
              HttpFailure.unavailable.status,
              { status: "draining", reason: "the server is shutting down and takes no new tasks" },
              { "cache-control": "no-store" },
            );
            return;
          }
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`the store did not answer within ${readyTimeoutMs} ms`)), readyTimeoutMs);
          });
          try {
            await Promise.race([app.engine.inspect.task(PROBE_ID), timeout]);
            sendJson(res, 200, { status: "ready" }, { "cache-control": "no-store" });
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            ctx.logger.warn({ requestId: ctx.requestId, reason }, "readiness probe failed");
            sendJson(
              res,
              HttpFailure.unavailable.status,
              { status: "unavailable", reason: "the task store is not reachable" },
              { "cache-control": "no-store" },
            );
          } finally {
            clearTimeout(timer);
          }
        },
      },
    },
  ];
  // Only a server built with metrics has them to serve (TaskServerOptions.metrics).
  if (metrics) {
    routes.push({
      path: "/metrics",
      methods: {
        GET: async (req, res) => {
          if (metricsTokens.size > 0 && !metricsTokens.has(bearerTokenOf(req))) {
            sendJson(
              res,
              HttpFailure.unauthorized.status,
              { error: { message: "Unauthorized: /metrics requires the metrics token" } },
              {
                "www-authenticate": 'Bearer realm="metrics"',
              },
            );
            return;
          }
          const body = await metrics.registry.metrics();
          res.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" });
          res.end(body);
        },
      },
    });
  }
  return routes;
}
