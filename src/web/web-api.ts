import type { IncomingMessage, ServerResponse } from "node:http";
import { TaskError } from "../core/errors.js";
import type { RouteContext, RouteHandler } from "../http/route-table.js";
import { HttpFailure, httpStatusOf } from "../http/rpc-http-errors.js";
import type { TaskServer } from "../mcp/task-server.js";
import { toDetail, toSummary, type Redaction } from "./task-view.js";
import { countingFilter, encodeCursor, parseViewFilter, parseViewQuery } from "./view-query.js";
import { taskStats } from "./task-stats.js";
import type { Viewer } from "./viewer.js";
import { SECURITY_HEADERS } from "./static-assets.js";
import { WebRequestError } from "./web-error.js";

/** A web API handler: runs for an authenticated viewer, returns the JSON body (status 200) or throws. */
export type ApiHandler = (viewer: Viewer, ctx: RouteContext, req: IncomingMessage) => Promise<unknown>;

export interface ApiDeps {
  app: TaskServer;
  resolveViewer: (req: IncomingMessage) => Promise<Viewer | null>;
  redaction: Redaction;
  /** The trace viewer's URL template (`…/{traceId}`), checked; absent: trace ids are shown unlinked. */
  traceUrl?: string;
}

/** JSON with the web view's headers; never cached (it is live data behind a credential). */
export function sendApiJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(JSON.stringify(body));
}

export function sendUnauthorized(res: ServerResponse): void {
  sendApiJson(
    res,
    HttpFailure.unauthorized.status,
    { error: { message: "Unauthorized: send Authorization: Bearer <admin token or your MCP token>" } },
    {
      "www-authenticate": 'Bearer realm="mcp-tasks web view"',
    },
  );
}

/**
 * Wraps an {@link ApiHandler}: 401 without a valid credential, the handler's JSON otherwise, and
 * clear JSON errors for refusals (never a stack trace; unexpected failures are logged with the request id).
 */
export function api(deps: ApiDeps, handler: ApiHandler): RouteHandler {
  return async (req, res, ctx) => {
    const viewer = await deps.resolveViewer(req);
    if (!viewer) {
      sendUnauthorized(res);
      return;
    }
    try {
      sendApiJson(res, 200, await handler(viewer, ctx, req));
    } catch (error) {
      if (error instanceof WebRequestError) {
        sendApiJson(res, error.status, { error: { message: error.message } });
        return;
      }
      const status = error instanceof TaskError ? httpStatusOf(error) : HttpFailure.internal.status;
      if (error instanceof TaskError && status < 500) {
        // A refusal the engine explains (not found, terminal, rate limited, …): its words are for the caller.
        sendApiJson(res, status, { error: { message: error.message } });
        return;
      }
      ctx.logger.error(
        { err: error, requestId: ctx.requestId, path: ctx.url.pathname, taskId: ctx.params["id"] },
        "web API request failed",
      );
      sendApiJson(res, HttpFailure.internal.status, { error: { message: "Internal error" } });
    }
  };
}

/** `GET /tasks/api/session`: who the credential is, and what the page needs to draw its filters. */
export function sessionInfo(deps: ApiDeps): ApiHandler {
  return async (viewer) => ({
    principal: viewer.principal,
    admin: viewer.admin,
    tools: deps.app.toolNames,
    redacted: Object.entries(deps.redaction)
      .filter(([, on]) => on)
      .map(([what]) => what),
  });
}

/** `GET /tasks/api/tasks`: one page, newest first, plus the counts per status of the filtered tasks. */
export function listTasks(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const query = parseViewQuery(ctx.url.searchParams, viewer, deps.app.engine.inspect.keepsWaits);
    const store = deps.app.engine.inspect;
    const rows = await store.search(query.filter, query.after, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    // The counts follow every filter but the status one: they are what a status filter picks from.
    const counts = await store.countByStatus(countingFilter(query.filter));
    return {
      tasks: page.map(toSummary),
      counts,
      ...(rows.length > query.limit && last && { nextCursor: encodeCursor(last) }),
    };
  };
}

/**
 * `GET /tasks/api/stats`: the charts' numbers (throughput per bucket, durations) for the same
 * filters as the listing, over the window `from`–`to` (default: the last hour); in cluster mode
 * also the queue depth. Workers and leases are `GET /tasks/api/cluster` (admins only).
 */
export function taskStatsOf(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const filter = parseViewFilter(ctx.url.searchParams, viewer, deps.app.engine.inspect.keepsWaits);
    const engine = deps.app.engine;
    const stats = await taskStats(engine.inspect, filter, Date.now());
    const queueDepth = await engine.inspect.queueDepth();
    if (queueDepth !== null) stats.queueDepth = queueDepth;
    const queued = await engine.inspect.queueDepths();
    if (queued !== null) {
      const scope = filter.scope;
      stats.queued = queued
        .filter((depth) => "any" in scope || depth.owner === scope.owner)
        .map((depth) => ({ owner: depth.owner, tool: depth.name, queued: depth.queued }));
    }
    return stats;
  };
}

/**
 * `GET /tasks/api/cluster` (admins only: it names every owner's running tasks and the cluster's
 * hosts): in cluster mode the workers alive, the leases they hold and the queue depth, as the lease
 * store sees them at this moment (so the same on every node); `{ clustered: false }` on a single node.
 */
export function clusterState(deps: ApiDeps): ApiHandler {
  return async (viewer) => {
    if (!viewer.admin) throw new WebRequestError("forbidden", "The workers and leases of the cluster are shown to admins only");
    const engine = deps.app.engine;
    const now = Date.now();
    const view = await engine.inspect.clusterView(now);
    return view === null ? { clustered: false } : { clustered: true, now, ...view };
  };
}

/** `GET /tasks/api/tasks/:id`: arguments, outcome, the input exchange and the timeline, redacted as configured. */
export function taskDetail(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const id = ctx.params["id"] ?? "";
    const store = deps.app.engine.inspect;
    const task = await store.task(id, viewer.scope);
    // Another owner's task is "not found", exactly like an unknown id: ids cannot be probed (T-SEC-3).
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const [history, inputs] = await Promise.all([store.history(id), store.inputs(id)]);
    return { task: toDetail(task, history, inputs, deps.redaction, deps.traceUrl) };
  };
}
