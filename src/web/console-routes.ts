/**
 * The operator's console routes of the web view: starting a tool and a task's timeline (docs/web-view.md).
 * Kept beside webRoutes' own table so each part of the console is one list of routes.
 */
import type { HttpRoute } from "../http/route-table.js";
import { sendAsset, staticAsset } from "./static-assets.js";
import { taskTimeline } from "./task-timeline.js";
import { listTools, startTool } from "./tool-start.js";
import { api, type ApiDeps, type ApiHandler } from "./web-api.js";
import { WebRequestError } from "./web-error.js";

/**
 * `GET /tasks/api/tasks/:id/timeline`: the task's timeline (task-timeline.ts), bound to the viewer
 * like every task route: another owner's task is "not found" like an unknown id (T-SEC-3).
 */
export function timelineOf(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const engine = deps.app.engine;
    const task = await engine.inspect.task(ctx.params["id"] ?? "", viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    return taskTimeline(engine.inspect, engine.outbox, task, deps.redaction);
  };
}

/** `GET /tasks/api/tools`, `POST /tasks/api/tools/:name/start`, `GET /tasks/api/tasks/:id/timeline`, and the page's modules for them. */
export function consoleRoutes(deps: ApiDeps): HttpRoute[] {
  const startScript = staticAsset("start-tool.js", "text/javascript; charset=utf-8");
  const timelineScript = staticAsset("timeline.js", "text/javascript; charset=utf-8");
  const style = staticAsset("console.css", "text/css; charset=utf-8");
  return [
    { path: "/tasks/assets/start-tool.js", methods: { GET: (req, res) => sendAsset(req, res, startScript) } },
    { path: "/tasks/assets/timeline.js", methods: { GET: (req, res) => sendAsset(req, res, timelineScript) } },
    { path: "/tasks/assets/console.css", methods: { GET: (req, res) => sendAsset(req, res, style) } },
    { path: "/tasks/api/tools", methods: { GET: api(deps, listTools(deps)) } },
    { path: "/tasks/api/tools/:name/start", methods: { POST: api(deps, startTool(deps)) } },
    { path: "/tasks/api/tasks/:id/timeline", methods: { GET: api(deps, timelineOf(deps)) } },
  ];
}
