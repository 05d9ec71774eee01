import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import { isTerminal } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import { BodyTooLargeError, readBody } from "../http/read-body.js";
import type { StoredToolCall } from "../mcp/tool-runner.js";
import type { RouteContext, RouteHandler } from "../http/route-table.js";
import { HttpFailure, httpStatusOf } from "../http/rpc-http-errors.js";
import { currentRequestPeer } from "../mcp/request-peer.js";
import type { TaskServer } from "../mcp/task-server.js";
import { toDetail, toSummary, type Redaction } from "./task-view.js";
import { countingFilter, encodeCursor, parseViewFilter, parseViewQuery } from "./view-query.js";
import { taskStats } from "./task-stats.js";
import { isLeaseStore } from "../store/lease-store.js";
import type { Viewer } from "./viewer.js";
import { SECURITY_HEADERS } from "./static-assets.js";
import { WebRequestError } from "./web-error.js";
import { answerOf } from "./input-answer.js";

/** A web API handler: runs for an authenticated viewer, returns the JSON body (status 200) or throws. */
type ApiHandler = (viewer: Viewer, ctx: RouteContext, req: IncomingMessage) => Promise<unknown>;

export interface ApiDeps {
  app: TaskServer;
  resolveViewer: (req: IncomingMessage) => Promise<Viewer | null>;
  redaction: Redaction;
}

/** JSON with the web view's headers; never cached (it is live data behind a credential). */
export function sendApiJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

export function sendUnauthorized(res: ServerResponse): void {
  sendApiJson(res, HttpFailure.unauthorized.status, { error: { message: "Unauthorized: send Authorization: Bearer <admin token or your MCP token>" } }, {
    "www-authenticate": 'Bearer realm="mcp-tasks web view"',
  });
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
      ctx.logger.error({ err: error, requestId: ctx.requestId, path: ctx.url.pathname, taskId: ctx.params["id"] }, "web API request failed");
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
    const query = parseViewQuery(ctx.url.searchParams, viewer);
    const store = deps.app.engine.store;
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
 * also the queue depth. Workers and leases are not listed: the lease store does not expose them.
 */
export function taskStatsOf(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const filter = parseViewFilter(ctx.url.searchParams, viewer);
    const engine = deps.app.engine;
    const stats = await taskStats(engine.store, filter, Date.now());
    if (engine.clustered && isLeaseStore(engine.store)) stats.queueDepth = await engine.store.queueDepth();
    return stats;
  };
}

/** `GET /tasks/api/tasks/:id`: arguments, outcome, the input exchange and the timeline, redacted as configured. */
export function taskDetail(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const id = ctx.params["id"] ?? "";
    const store = deps.app.engine.store;
    const task = await store.get(id, viewer.scope);
    // Another owner's task is "not found", exactly like an unknown id: ids cannot be probed (T-SEC-3).
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const [history, inputs] = await Promise.all([store.history(id), store.inputs(id)]);
    return { task: toDetail(task, history, inputs, deps.redaction) };
  };
}

/**
 * `POST /tasks/api/tasks/:id/cancel`: through `engine.cancel`, so the page cancels exactly as
 * `tasks/cancel` does (status first, then the handler's signal). An admin acts for the task's
 * owner; anyone else only on their own tasks.
 */
export function cancelTask(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => ({ task: toSummary(await cancelOne(deps, viewer, ctx, ctx.params["id"] ?? "")) });
}

/** Most tasks one bulk cancel acts on (the page's selection of one page at most). */
export const MAX_BULK = 500;

const BulkBody = z.strictObject({ ids: z.array(z.string().min(1).max(256)).min(1).max(MAX_BULK) });

/**
 * `POST /tasks/api/cancel` with `{"ids": [...]}`: cancels each task as the single cancel does (and
 * records it the same way), and answers per id — `{id, task}` when cancelled, `{id, error}` when
 * not (not found, already ended…) — so one refusal does not hide the others' outcome.
 */
export function cancelTasks(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx, req) => {
    const { ids } = parseBody(BulkBody, await readJson(req), '{"ids": ["<task id>", …]}');
    const results = [];
    for (const id of new Set(ids)) {
      try {
        results.push({ id, task: toSummary(await cancelOne(deps, viewer, ctx, id)) });
      } catch (error) {
        if (error instanceof WebRequestError || (error instanceof TaskError && httpStatusOf(error) < 500)) {
          results.push({ id, error: { message: error.message } });
        } else {
          throw error;
        }
      }
    }
    return { results };
  };
}

async function cancelOne(deps: ApiDeps, viewer: Viewer, ctx: RouteContext, id: string): Promise<TaskRecord> {
  const engine = deps.app.engine;
  const task = await engine.store.get(id, viewer.scope);
  if (!task) throw new WebRequestError("not_found", "Task not found");
  const peer = currentRequestPeer();
  ctx.logger.info(
    {
      audit: "cancel_requested",
      via: "web",
      taskId: id,
      owner: task.owner,
      operation: "cancel",
      peer: peer ?? null,
      principal: viewer.principal,
      requestId: ctx.requestId,
    },
    "cancel requested from the web view",
  );
  // The requestor reads who cancelled in the statusMessage; an operator's name is not theirs to see.
  const statusMessage = viewer.admin ? "Cancelled from the web view by an operator" : "Cancelled from the web view";
  return engine.cancel(id, callerFor(viewer, task), { statusMessage });
}

/** An admin reaches the task as its owner, but spends its own allowances, not the owner's. */
function callerFor(viewer: Viewer, task: TaskRecord): Caller {
  const peer = currentRequestPeer();
  return { owner: task.owner, ...(peer !== undefined && { peer }), ...(viewer.admin && { actingAs: viewer.principal }) };
}

/**
 * `POST /tasks/api/tasks/:id/inputs/:inputId`: answers one of the task's pending questions as its
 * requestor would (through `engine.respond`, so the handler waiting for it wakes at once), with
 * `{"action": "accept" | "decline" | "cancel", "content"?: {…}, "text"?: "…"}` checked against the
 * question. The first answer wins: 409 when the question was answered meanwhile.
 */
export function answerInput(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx, req) => {
    const id = ctx.params["id"] ?? "";
    const inputId = ctx.params["inputId"] ?? "";
    const engine = deps.app.engine;
    const task = await engine.store.get(id, viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const body = await readJson(req);
    if (isTerminal(task.status)) throw new WebRequestError("terminal", `The task has ended (status '${task.status}'): its questions need no answer`);
    const input = await engine.store.getInput(task.id, inputId);
    if (!input) throw new WebRequestError("not_found", "Question not found");
    if (input.answer !== null) throw new WebRequestError("terminal", "The question was already answered");
    const answer = answerOf(input.method, input.params, body);
    const peer = currentRequestPeer();
    ctx.logger.info(
      { audit: "answer_requested", via: "web", taskId: id, owner: task.owner, method: input.method, peer: peer ?? null, principal: viewer.principal, requestId: ctx.requestId },
      "answer to an input request from the web view",
    );
    if (!(await engine.respond(task.id, callerFor(viewer, task), inputId, answer))) {
      throw new WebRequestError("terminal", "The question was already answered");
    }
    return { task: toSummary((await engine.store.get(task.id, viewer.scope)) ?? task) };
  };
}

/**
 * `POST /tasks/api/tasks/:id/rerun`: a new task with the finished task's tool and arguments, for
 * the same owner (an admin creates it on the owner's behalf, within the owner's task limits). The
 * new task has no MCP session: its progress goes nowhere, and its questions (if the original
 * requestor could answer them) are answered from the page or by a tasks/result on its id.
 */
export function rerunTask(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const id = ctx.params["id"] ?? "";
    const engine = deps.app.engine;
    const task = await engine.store.get(id, viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    if (!isTerminal(task.status)) throw new WebRequestError("terminal", `Only a finished task can be re-run: this one is '${task.status}'`);
    const call = task.request as Partial<StoredToolCall> | null;
    if (task.method !== "tools/call" || typeof call?.name !== "string") {
      throw new WebRequestError("invalid_params", `Only a tool call can be re-run, not ${task.method}`);
    }
    const tool = deps.app.host.tools.get(call.name);
    if (!tool) throw new WebRequestError("method_not_found", `The tool ${call.name} is no longer served here`);
    const peer = currentRequestPeer();
    // Arguments only: what a tool's gather collected belongs to the first run, the re-run asks again.
    const request: StoredToolCall = { name: call.name, arguments: call.arguments ?? {} };
    const created = await engine.create({
      ...callerFor(viewer, task),
      method: "tools/call",
      name: call.name,
      request,
      origin: {
        sessionId: null,
        progressToken: null,
        accepts: task.origin.accepts,
        ...(task.origin.era !== undefined && { era: task.origin.era }),
      },
      ttl: task.ttlMs ?? undefined,
      retryable: tool.definition.retryable ?? false,
    });
    ctx.logger.info(
      { audit: "rerun_requested", via: "web", taskId: created.id, rerunOf: task.id, owner: task.owner, peer: peer ?? null, principal: viewer.principal, requestId: ctx.requestId },
      "task re-run from the web view",
    );
    return { task: toSummary(created), rerunOf: task.id };
  };
}

/** Largest JSON body the web API reads (answers with a long text are the largest). */
const MAX_BODY_BYTES = 256 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text: string;
  try {
    text = await readBody(req, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new WebRequestError("invalid_params", `Invalid body: larger than ${MAX_BODY_BYTES} bytes`);
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WebRequestError("invalid_params", "Invalid body: not JSON");
  }
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown, shape: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  throw new WebRequestError("invalid_params", `Invalid body${where}: ${issue?.message ?? "malformed"}. Send ${shape}`);
}
