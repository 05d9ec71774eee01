/**
 * The web API's control of the queue (admins only): pause and resume a tool across the cluster,
 * purge queued tasks (of a tool, or of the view's filter), and retry every failed task of the
 * filter. Every action is written to the audit log with the principal who asked; a principal who
 * is no admin is refused (403), an unknown tool is 404 naming it.
 */
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import type { TaskRecord } from "../core/task.js";
import type { RouteContext } from "../http/route-table.js";
import { httpStatusOf } from "../http/rpc-http-errors.js";
import type { TaskFilter } from "../store/task-store.js";
import { rerunOne } from "./task-actions.js";
import { toSummary } from "./task-view.js";
import { parseViewFilter } from "./view-query.js";
import type { Viewer } from "./viewer.js";
import type { ApiDeps, ApiHandler } from "./web-api.js";
import { WebRequestError } from "./web-error.js";

/** Most tasks one purge or one bulk retry acts on; what is left is reached by asking again. */
export const MAX_QUEUE_ACTION = 500;

/** A search page while collecting the tasks of an action. */
const PAGE = 200;

/**
 * `GET /tasks/api/queues`: every tool this server serves, with whether it is paused (since when,
 * by whom: admins only) and how many of its tasks wait in the queue (the viewer's own, for a
 * principal who is no admin). Paused tools no longer served are listed too, so they can be resumed.
 */
export function listQueues(deps: ApiDeps): ApiHandler {
  return async (viewer) => {
    const engine = deps.app.engine;
    const paused = new Map(engine.pausedTools().map((pause) => [pause.name, pause]));
    const queued = new Map<string, number>();
    const scope = viewer.scope;
    for (const depth of (await engine.inspect.queueDepths()) ?? []) {
      if ("any" in scope || depth.owner === scope.owner) queued.set(depth.name, (queued.get(depth.name) ?? 0) + depth.queued);
    }
    const served = deps.app.toolNames;
    const names = [...served, ...[...paused.keys()].filter((name) => !served.includes(name)).sort()];
    return {
      tools: names.map((name) => {
        const pause = paused.get(name);
        return {
          name,
          served: served.includes(name),
          paused: pause !== undefined,
          ...(pause !== undefined && viewer.admin && { pausedAt: pause.pausedAt, pausedBy: pause.pausedBy }),
          queued: queued.get(name) ?? 0,
        };
      }),
    };
  };
}

/** `POST /tasks/api/queues/:tool/pause`: new tasks of the tool are queued and none starts, on every node, until resumed. */
export function pauseTool(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const tool = knownTool(deps, viewer, ctx, "pause");
    audit(ctx, viewer, "tool_pause_requested", { tool }, "tool pause requested from the web view");
    const changed = await deps.app.engine.pauseTool(tool, viewer.principal);
    return { tool, paused: true, changed };
  };
}

/** `POST /tasks/api/queues/:tool/resume`: the tool's queued tasks start as slots allow, on every node. */
export function resumeTool(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    // A paused tool no longer served can still be resumed (nothing would ever start it otherwise).
    const tool = knownTool(deps, viewer, ctx, "resume");
    audit(ctx, viewer, "tool_resume_requested", { tool }, "tool resume requested from the web view");
    const changed = await deps.app.engine.resumeTool(tool, viewer.principal);
    return { tool, paused: false, changed };
  };
}

/** `POST /tasks/api/queues/:tool/purge`: cancels every queued task of the tool (see {@link purgeQueued}). */
export function purgeTool(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const tool = knownTool(deps, viewer, ctx, "purge");
    return purge(deps, viewer, ctx, { scope: viewer.scope, name: tool });
  };
}

/**
 * `POST /tasks/api/purge?<the view's filter>`: cancels the queued tasks (created, not started) that
 * the filter shows, each with a status message naming who purged it. A task that starts in the
 * moment between is cancelled as any running task is. Answers `{purged, tasks, more}`.
 */
export function purgeQueued(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    requireAdmin(viewer, "purge queued tasks");
    return purge(deps, viewer, ctx, parseViewFilter(ctx.url.searchParams, viewer, deps.app.engine.inspect.keepsWaits));
  };
}

/**
 * `POST /tasks/api/retry-failed?<the view's filter>`: re-runs every failed task the filter shows
 * (at most {@link MAX_QUEUE_ACTION}) as the single re-run does — a new task with the same tool and
 * arguments for the same owner, linked to the old one — and answers per task, `{id, task}` or
 * `{id, error}`, so one refusal (a tool no longer served, arguments it now refuses) hides nothing.
 */
export function retryFailed(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    requireAdmin(viewer, "retry failed tasks");
    const filter = parseViewFilter(ctx.url.searchParams, viewer, deps.app.engine.inspect.keepsWaits);
    if (filter.statuses !== undefined && !filter.statuses.includes("failed")) return { retried: 0, results: [], more: false };
    const { tasks, more } = await collect(deps, { ...filter, statuses: ["failed"] }, async () => true);
    audit(
      ctx,
      viewer,
      "bulk_rerun_requested",
      { filter: describeFilter(filter), count: tasks.length },
      "bulk retry requested from the web view",
    );
    const results = [];
    let retried = 0;
    for (const task of tasks) {
      try {
        const created = await rerunOne(deps, viewer, ctx, task, "web-bulk-retry");
        retried++;
        results.push({ id: task.id, task: toSummary(created) });
      } catch (error) {
        if (error instanceof WebRequestError || (error instanceof TaskError && httpStatusOf(error) < 500)) {
          results.push({ id: task.id, error: { message: error.message } });
        } else {
          throw error;
        }
      }
    }
    return { retried, results, more };
  };
}

async function purge(deps: ApiDeps, viewer: Viewer, ctx: RouteContext, filter: TaskFilter): Promise<unknown> {
  const engine = deps.app.engine;
  const { tasks, more } = await collect(
    deps,
    { ...filter, statuses: ["working"] },
    async (task) => (await engine.inspect.isQueued(task.id)) === true,
  );
  audit(ctx, viewer, "purge_requested", { filter: describeFilter(filter), count: tasks.length }, "queue purge requested from the web view");
  // The requestor reads who emptied the queue under its task.
  const statusMessage = `Purged from the queue by ${viewer.principal}`;
  const purged = [];
  for (const task of tasks) {
    const caller: Caller = { owner: task.owner, ...(ctx.peer !== undefined && { peer: ctx.peer }), actingAs: viewer.principal };
    try {
      purged.push(toSummary(await engine.cancel(task.id, caller, { statusMessage })));
    } catch (error) {
      // Ended meanwhile (finished, cancelled by its requestor): nothing left to purge.
      if (!(error instanceof TaskError && httpStatusOf(error) < 500)) throw error;
    }
  }
  return { purged: purged.length, tasks: purged, more };
}

/** Up to {@link MAX_QUEUE_ACTION} tasks of `filter`, newest first, that `keep` keeps; `more` when others may be left. */
async function collect(
  deps: ApiDeps,
  filter: TaskFilter,
  keep: (task: TaskRecord) => Promise<boolean>,
): Promise<{ tasks: TaskRecord[]; more: boolean }> {
  const inspect = deps.app.engine.inspect;
  const tasks: TaskRecord[] = [];
  let after: TaskRecord | null = null;
  for (;;) {
    const page: TaskRecord[] = await inspect.search(filter, after && { createdAt: after.createdAt, id: after.id }, PAGE);
    for (const task of page) {
      if (!(await keep(task))) continue;
      if (tasks.length === MAX_QUEUE_ACTION) return { tasks, more: true };
      tasks.push(task);
    }
    if (page.length < PAGE) return { tasks, more: false };
    after = page.at(-1) ?? null;
  }
}

/** The tool an action names: 403 for a viewer who is no admin, 404 naming a tool neither served nor paused. */
function knownTool(deps: ApiDeps, viewer: Viewer, ctx: RouteContext, action: string): string {
  requireAdmin(viewer, `${action} a tool`);
  const tool = ctx.params["tool"] ?? "";
  const known = deps.app.toolNames.includes(tool) || deps.app.engine.isPaused(tool);
  if (!known) throw new WebRequestError("not_found", `Unknown tool: ${JSON.stringify(tool)} is not a tool this server serves`);
  return tool;
}

function requireAdmin(viewer: Viewer, what: string): void {
  if (!viewer.admin) throw new WebRequestError("forbidden", `Only an admin can ${what}`);
}

function audit(ctx: RouteContext, viewer: Viewer, event: string, fields: Record<string, unknown>, message: string): void {
  ctx.logger.info(
    { audit: event, via: "web", ...fields, peer: ctx.peer ?? null, principal: viewer.principal, requestId: ctx.requestId },
    message,
  );
}

/** The filter as the audit log records it (no scope: the principal says it). */
function describeFilter(filter: TaskFilter): Record<string, unknown> {
  const { scope: _scope, ...rest } = filter;
  return rest;
}
