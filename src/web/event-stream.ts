import type { ServerResponse } from "node:http";
import type { RouteContext, RouteHandler } from "../http/route-table.js";
import type { ApiDeps } from "./web-api.js";
import { sendApiJson, sendUnauthorized } from "./web-api.js";
import type { TaskFilter } from "../store/task-store.js";
import { countingFilter, parseViewFilter } from "./view-query.js";
import { WebRequestError } from "./web-error.js";
import { SECURITY_HEADERS } from "./static-assets.js";
import type { FeedMessage, TaskFeed } from "./task-feed.js";
import type { EventStreamCaps, StreamRefusal } from "./event-stream-caps.js";
import type { Viewer } from "./viewer.js";

/** A client this far behind is cut off; it reconnects and reloads its snapshot instead of growing our memory. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** A comment line this often keeps proxies from closing a quiet stream. Not a poll: nothing is read. */
const HEARTBEAT_MS = 15_000;

/**
 * `GET /tasks/api/events`: server-sent events for the viewer — `ready` once subscribed, then
 * `task` (a task's new summary) and `counts` (per status, of the tasks the query's filters —
 * those of `GET /tasks/api/tasks` but status — match) as the engine's events arrive. The
 * page reads it with fetch so the credential travels in the Authorization header, never in a URL.
 * Streams are capped per principal (429 beyond its share) and in all (503 with Retry-After):
 * see {@link EventStreamCaps}.
 */
export function eventStream(deps: ApiDeps, feed: TaskFeed, caps: EventStreamCaps): RouteHandler {
  return async (req, res, ctx) => {
    const viewer = await deps.resolveViewer(req);
    if (!viewer) {
      sendUnauthorized(res);
      return;
    }
    let counting: TaskFilter;
    try {
      counting = countingFilter(parseViewFilter(ctx.url.searchParams, viewer, deps.app.engine.inspect.keepsWaits));
    } catch (error) {
      if (!(error instanceof WebRequestError)) throw error;
      sendApiJson(res, error.status, { error: { message: error.message } });
      return;
    }
    const admitted = caps.admit(viewer);
    if (typeof admitted !== "function") {
      refuse(deps, res, ctx, viewer, admitted);
      return;
    }
    res.once("close", admitted);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      // Tell buffering reverse proxies (nginx) to pass events through at once.
      "x-accel-buffering": "no",
    });
    const write = (event: string, data: unknown): void => {
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        ctx.logger.warn({ requestId: ctx.requestId, principal: viewer.principal }, "web view: event stream too far behind; closing it");
        res.destroy();
        return;
      }
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const unsubscribe = feed.subscribe(viewer, (message: FeedMessage) => write(message.event, message.data), counting);
    write("ready", { principal: viewer.principal, admin: viewer.admin });
    const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
    heartbeat.unref();
    ctx.logger.debug({ requestId: ctx.requestId, principal: viewer.principal }, "web view: event stream opened");
    res.once("close", () => {
      clearInterval(heartbeat);
      unsubscribe();
      ctx.logger.debug({ requestId: ctx.requestId, principal: viewer.principal }, "web view: event stream closed");
    });
  };
}

/**
 * The refusal of a stream over a cap, in the web API's error shape: 429 when the principal holds
 * its share (its own doing), 503 with Retry-After when the server holds its maximum, as for HTTP
 * sessions (docs/limits.md).
 */
function refuse(deps: ApiDeps, res: ServerResponse, ctx: RouteContext, viewer: Viewer, refusal: StreamRefusal): void {
  deps.app.engine.observer.limitRejected(refusal.name);
  const owner = "owner" in viewer.scope ? viewer.scope.owner : null;
  ctx.logger.warn(
    {
      audit: "limit_hit",
      limit: refusal.name,
      owner,
      principal: viewer.principal,
      method: "GET /tasks/api/events",
      peer: ctx.peer ?? null,
      taskId: null,
      requestId: ctx.requestId,
    },
    `limit hit: ${refusal.name}`,
  );
  if (refusal.name === "event_streams_per_viewer") {
    const error = new WebRequestError(
      "limit_exceeded",
      `Too many event streams for this principal: at most ${refusal.limit}; close another page of the web view`,
    );
    sendApiJson(res, error.status, { error: { message: error.message } });
  } else {
    const error = new WebRequestError("unavailable", `Too many event streams on this server (at most ${refusal.limit}); try again later`);
    sendApiJson(res, error.status, { error: { message: error.message } }, { "retry-after": "60" });
  }
}
