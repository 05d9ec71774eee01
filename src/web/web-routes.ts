import type { BearerVerifier } from "../http/bearer-auth.js";
import type { HttpRoute } from "../http/route-table.js";
import type { TaskServer } from "../mcp/task-server.js";
import { eventStream } from "./event-stream.js";
import { DEFAULT_MAX_EVENT_STREAMS, DEFAULT_MAX_EVENT_STREAMS_PER_VIEWER, EventStreamCaps } from "./event-stream-caps.js";
import { sendAsset, staticAsset } from "./static-assets.js";
import { TaskFeed, type FeedOptions } from "./task-feed.js";
import { NO_REDACTION, type Redaction } from "./task-view.js";
import { traceUrlProblem } from "./trace-link.js";
import { viewerResolver } from "./viewer.js";
import { answerInput, cancelTask, cancelTasks, emitEvent, rerunTask } from "./task-actions.js";
import { listDeliveries, redeliver } from "./webhook-deliveries.js";
import { consoleRoutes } from "./console-routes.js";

import { listQueues, pauseTool, purgeQueued, purgeTool, resumeTool, retryFailed } from "./queue-control.js";
import { api, clusterState, listTasks, sessionInfo, taskDetail, taskStatsOf, type ApiDeps } from "./web-api.js";

/** Options of {@link webRoutes}. */
export interface WebOptions {
  /** Bearer tokens that open the view as an admin: every owner's tasks, cancel any. */
  adminTokens?: readonly string[];
  /**
   * The MCP endpoint's verifier: its principals see (and may cancel) their own tasks; those with
   * the `mcp-tasks:admin` scope (token file: `"admin": true`) see every task.
   */
  verifier?: BearerVerifier;
  /** What to hide from every viewer. Default: nothing. */
  redact?: Partial<Redaction>;
  /**
   * A trace viewer's URL template, e.g. `https://tracing.example/trace/{traceId}`: a task's trace
   * id in its detail links there. Must be an http(s) URL containing `{traceId}` (else a TypeError).
   */
  traceUrl?: string;
  /** Live feed timing (tests). */
  feed?: FeedOptions;
  /** Event streams (`GET /tasks/api/events`) open at once, all viewers together; beyond it 503. Default 500. */
  maxEventStreams?: number;
  /** Event streams one principal holds open at once (one per open page); beyond it 429. Default 20. */
  maxEventStreamsPerViewer?: number;
}

/**
 * The live web view of tasks, as routes for `serveHttp({ routes })`:
 * - `GET /tasks` — the page (static HTML, JS, CSS; no data, so no credential needed to load it);
 * - `GET /tasks/api/session | tasks | tasks/:id | stats | cluster | events`, `POST /tasks/api/tasks/:id/cancel |
 *   tasks/:id/rerun | tasks/:id/inputs/:inputId | tasks/:id/events | cancel`, `GET /tasks/api/webhooks`, `POST
 *   /tasks/api/webhooks/redeliver` (webhook-deliveries.ts), `GET /tasks/api/tools | tasks/:id/timeline`, `POST
 *   /tasks/api/tools/:name/start` (console-routes.ts), `GET /tasks/api/queues`, `POST
 *   /tasks/api/queues/:tool/pause | resume | purge`, `POST /tasks/api/purge | retry-failed`
 *   (queue-control.ts) — the data and the actions, each
 *   requiring `Authorization: Bearer <token>` (401 otherwise) and bound to the viewer's tasks.
 */
export function webRoutes(app: TaskServer, options: WebOptions = {}): HttpRoute[] {
  const traceUrlRefused = options.traceUrl === undefined ? undefined : traceUrlProblem(options.traceUrl);
  if (traceUrlRefused !== undefined) throw new TypeError(traceUrlRefused);
  const deps: ApiDeps = {
    app,
    resolveViewer: viewerResolver({
      ...(options.adminTokens && { adminTokens: options.adminTokens }),
      ...(options.verifier && { verifier: options.verifier }),
    }),
    redaction: { ...NO_REDACTION, ...options.redact },
    ...(options.traceUrl !== undefined && { traceUrl: options.traceUrl }),
  };
  const feed = new TaskFeed(app.engine, app.engine.logger, options.feed);
  const streamCaps = new EventStreamCaps(
    options.maxEventStreams ?? DEFAULT_MAX_EVENT_STREAMS,
    options.maxEventStreamsPerViewer ?? DEFAULT_MAX_EVENT_STREAMS_PER_VIEWER,
  );
  const page = staticAsset("tasks.html", "text/html; charset=utf-8");
  const script = staticAsset("tasks.js", "text/javascript; charset=utf-8");
  const style = staticAsset("tasks.css", "text/css; charset=utf-8");
  const queues = staticAsset("queues.js", "text/javascript; charset=utf-8");
  return [
    // The root of a server with a web view leads to it.
    { path: "/", methods: { GET: (_req, res) => void res.writeHead(302, { location: "/tasks" }).end() } },
    { path: "/tasks", methods: { GET: (req, res) => sendAsset(req, res, page) } },
    { path: "/tasks/assets/tasks.js", methods: { GET: (req, res) => sendAsset(req, res, script) } },
    { path: "/tasks/assets/tasks.css", methods: { GET: (req, res) => sendAsset(req, res, style) } },
    { path: "/tasks/assets/queues.js", methods: { GET: (req, res) => sendAsset(req, res, queues) } },
    { path: "/tasks/api/session", methods: { GET: api(deps, sessionInfo(deps)) } },
    { path: "/tasks/api/tasks", methods: { GET: api(deps, listTasks(deps)) } },
    { path: "/tasks/api/stats", methods: { GET: api(deps, taskStatsOf(deps)) } },
    { path: "/tasks/api/cluster", methods: { GET: api(deps, clusterState(deps)) } },
    { path: "/tasks/api/tasks/:id", methods: { GET: api(deps, taskDetail(deps)) } },
    { path: "/tasks/api/tasks/:id/cancel", methods: { POST: api(deps, cancelTask(deps)) } },
    { path: "/tasks/api/tasks/:id/rerun", methods: { POST: api(deps, rerunTask(deps)) } },
    { path: "/tasks/api/tasks/:id/inputs/:inputId", methods: { POST: api(deps, answerInput(deps)) } },
    { path: "/tasks/api/tasks/:id/events", methods: { POST: api(deps, emitEvent(deps)) } },
    { path: "/tasks/api/cancel", methods: { POST: api(deps, cancelTasks(deps)) } },
    { path: "/tasks/api/events", methods: { GET: eventStream(deps, feed, streamCaps) } },
    { path: "/tasks/api/webhooks", methods: { GET: api(deps, listDeliveries(deps)) } },
    { path: "/tasks/api/webhooks/redeliver", methods: { POST: api(deps, redeliver(deps)) } },
    // Start a tool, a task's timeline (console-routes.ts).
    ...consoleRoutes(deps),

    // Queue control (queue-control.ts): pause, resume, purge, bulk retry; admins only.
    { path: "/tasks/api/queues", methods: { GET: api(deps, listQueues(deps)) } },
    { path: "/tasks/api/queues/:tool/pause", methods: { POST: api(deps, pauseTool(deps)) } },
    { path: "/tasks/api/queues/:tool/resume", methods: { POST: api(deps, resumeTool(deps)) } },
    { path: "/tasks/api/queues/:tool/purge", methods: { POST: api(deps, purgeTool(deps)) } },
    { path: "/tasks/api/purge", methods: { POST: api(deps, purgeQueued(deps)) } },
    { path: "/tasks/api/retry-failed", methods: { POST: api(deps, retryFailed(deps)) } },
  ];
}
