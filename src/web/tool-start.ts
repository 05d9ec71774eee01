/**
 * Starting a tool from the web view (docs/web-view.md, Start a tool): the tools served, each with
 * its task support and its input schema (the form is drawn from it), and the start itself — the
 * arguments checked on the server against the tool's schema exactly as `tools/call` checks them,
 * the task created the one way every tool task is, for the signed-in principal.
 */
import { z } from "zod";
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import type { RouteContext } from "../http/route-table.js";
import { checkToolArguments, createToolTask } from "../mcp/handlers/tools-call.js";
import { describeTool } from "../mcp/handlers/tools-list.js";
import type { TaskSupport } from "../mcp/tool-definition.js";
import { ANSWERABLE_METHODS } from "./input-answer.js";
import { parseBody, readJson } from "./task-actions.js";
import { toSummary } from "./task-view.js";
import type { Viewer } from "./viewer.js";
import type { ApiDeps, ApiHandler } from "./web-api.js";
import { WebRequestError } from "./web-error.js";

/** A tool as the start form needs it. */
export interface ToolView {
  name: string;
  title: string | null;
  description: string | null;
  /** The tool's `execution.taskSupport`: a "forbidden" tool is listed, never started from here. */
  taskSupport: TaskSupport;
  /** Whether the page offers to start it: the server has tasks on and the tool does not forbid them. */
  startable: boolean;
  /** Its arguments as JSON Schema, as `tools/list` gives them. */
  inputSchema: unknown;
}

/** `GET /tasks/api/tools`: every tool served, in registration order, each with its task support and schema. */
export function listTools(deps: ApiDeps): ApiHandler {
  return async () => {
    const host = deps.app.host;
    const tools: ToolView[] = [...host.tools.values()].map((tool) => {
      const described = describeTool(tool);
      const taskSupport = tool.definition.taskSupport ?? "forbidden";
      return {
        name: tool.name,
        title: described.title ?? null,
        description: described.description ?? null,
        taskSupport,
        startable: host.config.tasks && taskSupport !== "forbidden",
        inputSchema: described.inputSchema,
      };
    });
    return { tools };
  };
}

/**
 * The body of `POST /tasks/api/tools/:name/start`. `owner` (admins only): the owner key the task
 * is created for — an admin acts as that principal (docs/web-view.md); absent or null, the task is
 * bound to nobody, as tasks of an MCP endpoint without authentication are.
 */
const StartBody = z.strictObject({
  arguments: z.record(z.string(), z.unknown()).optional(),
  ttlMs: z.number().int().positive().optional(),
  owner: z.string().min(1).max(1024).nullable().optional(),
});

/**
 * `POST /tasks/api/tools/:name/start` with `{"arguments": {…}, "ttlMs"?: n, "owner"?: "<owner key>"}`:
 * creates a task of the tool for the viewer (its owner key, the one `tools/call` binds its tasks
 * to) and answers `{task}`. Refused: an unknown tool (404), one that forbids tasks (403), arguments
 * that do not fit its schema (400, naming the field), `owner` from anyone but an admin (403).
 */
export function startTool(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx, req) => {
    const name = ctx.params["name"] ?? "";
    const host = deps.app.host;
    const tool = host.tools.get(name);
    if (!tool) throw new WebRequestError("not_found", `No tool named ${name.slice(0, 100)} is served here`);
    const body = parseBody(StartBody, await readJson(deps, req), '{"arguments": {…}, "ttlMs"?: <ms>, "owner"?: "<owner key>"}');
    const support = tool.definition.taskSupport ?? "forbidden";
    if (!host.config.tasks) throw new WebRequestError("forbidden", "This server runs with tasks off: no tool can be started as a task");
    if (support === "forbidden") {
      throw new WebRequestError(
        "forbidden",
        `The tool ${name} forbids tasks (execution.taskSupport is "forbidden"): call it from an MCP client instead`,
      );
    }
    const caller = callerOf(viewer, ctx, body.owner);
    let checked;
    try {
      checked = checkToolArguments(host, { name, arguments: body.arguments ?? {} });
    } catch (error) {
      // The same words tools/call answers with (-32602), naming each field that does not fit.
      if (error instanceof TaskError && error.kind === "invalid_params") throw new WebRequestError("invalid_params", error.message);
      throw error;
    }
    const { task } = await createToolTask(host, checked, {
      caller,
      // No MCP session: the web view is the requestor, and answers the questions it can.
      origin: { sessionId: null, progressToken: null, accepts: [...ANSWERABLE_METHODS] },
      ttl: body.ttlMs,
      key: null,
    });
    ctx.logger.info(
      {
        audit: "start_requested",
        via: "web",
        taskId: task.id,
        tool: name,
        owner: task.owner,
        peer: ctx.peer ?? null,
        principal: viewer.principal,
        ...(caller.actingAs !== undefined && { actingAs: caller.actingAs }),
        requestId: ctx.requestId,
      },
      "tool started from the web view",
    );
    return { task: toSummary(task) };
  };
}

/** A viewer starts as itself; an admin as the owner it names (spending its own allowances, as for every admin action). */
function callerOf(viewer: Viewer, ctx: RouteContext, owner: string | null | undefined): Caller {
  const peer = ctx.peer;
  if (!viewer.admin) {
    if (owner !== undefined) throw new WebRequestError("forbidden", "Only an admin can start a task for another owner");
    if ("any" in viewer.scope) throw new WebRequestError("forbidden", "The viewer has no owner key to start a task for");
    return { owner: viewer.scope.owner, ...(peer !== undefined && { peer }) };
  }
  return { owner: owner ?? null, ...(peer !== undefined && { peer }), actingAs: viewer.principal };
}
