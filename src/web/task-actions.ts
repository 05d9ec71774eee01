/**
 * The web API's actions on tasks: cancel (one or several), answer a pending question, re-run,
 * emit an event for a waiting task's owner.
 * Each acts through the engine as the task's owner would (an admin on the owner's behalf), on
 * tasks the viewer may see only: another owner's task is "not found" like an unknown id (T-SEC-3).
 */
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import { isTerminal } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import { BodyTooLargeError, readBody } from "../http/read-body.js";
import type { RouteContext } from "../http/route-table.js";
import { httpStatusOf } from "../http/rpc-http-errors.js";
import type { StoredToolCall } from "../mcp/tool-runner.js";
import { checkToolArguments, createToolTask } from "../mcp/handlers/tools-call.js";
import { answerOf } from "./input-answer.js";
import { toSummary } from "./task-view.js";
import type { Viewer } from "./viewer.js";
import type { ApiDeps, ApiHandler } from "./web-api.js";
import { WebRequestError } from "./web-error.js";

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
    const { ids } = parseBody(BulkBody, await readJson(deps, req), '{"ids": ["<task id>", …]}');
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
  const task = await engine.inspect.task(id, viewer.scope);
  if (!task) throw new WebRequestError("not_found", "Task not found");
  const peer = ctx.peer;
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
  return engine.cancel(id, callerFor(viewer, ctx, task), { statusMessage });
}

/** An admin reaches the task as its owner, but spends its own allowances, not the owner's. */
export function callerFor(viewer: Viewer, ctx: RouteContext, task: TaskRecord): Caller {
  const peer = ctx.peer;
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
    const task = await engine.inspect.task(id, viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const body = await readJson(deps, req);
    if (isTerminal(task.status))
      throw new WebRequestError("terminal", `The task has ended (status '${task.status}'): its questions need no answer`);
    const input = await engine.inspect.input(task.id, inputId);
    if (!input) throw new WebRequestError("not_found", "Question not found");
    if (input.answer !== null) throw new WebRequestError("terminal", "The question was already answered");
    const answer = answerOf(input.method, body);
    const peer = ctx.peer;
    ctx.logger.info(
      {
        audit: "answer_requested",
        via: "web",
        taskId: id,
        owner: task.owner,
        method: input.method,
        peer: peer ?? null,
        principal: viewer.principal,
        requestId: ctx.requestId,
      },
      "answer to an input request from the web view",
    );
    if (!(await engine.respond(task.id, callerFor(viewer, ctx, task), inputId, answer))) {
      throw new WebRequestError("terminal", "The question was already answered");
    }
    return { task: toSummary((await engine.inspect.task(task.id, viewer.scope)) ?? task) };
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
    const task = await deps.app.engine.inspect.task(id, viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const created = await rerunOne(deps, viewer, ctx, task);
    return { task: toSummary(created), rerunOf: task.id };
  };
}

/**
 * Re-runs one finished tool task the viewer may see (the single re-run and the bulk retry of
 * queue-control.ts): a new task with its tool and arguments, for its owner, linked to it
 * (`origin.rerunOf`), audited as `rerun_requested`.
 */
export async function rerunOne(deps: ApiDeps, viewer: Viewer, ctx: RouteContext, task: TaskRecord, via = "web"): Promise<TaskRecord> {
  if (!isTerminal(task.status)) throw new WebRequestError("terminal", `Only a finished task can be re-run: this one is '${task.status}'`);
  const call = task.request as Partial<StoredToolCall> | null;
  if (task.method !== "tools/call" || typeof call?.name !== "string") {
    throw new WebRequestError("invalid_params", `Only a tool call can be re-run, not ${task.method}`);
  }
  const host = deps.app.host;
  if (!host.tools.get(call.name)) throw new WebRequestError("method_not_found", `The tool ${call.name} is no longer served here`);
  const peer = ctx.peer;
  // Arguments only: what a tool's gather collected belongs to the first run, the re-run asks
  // again. Checked against the tool as it is served now, and created the one way every tool
  // task is (its recovery, retryability and default ttl come from the tool's definition).
  const checked = checkToolArguments(host, { name: call.name, arguments: call.arguments ?? {} });
  const { task: created } = await createToolTask(host, checked, {
    caller: callerFor(viewer, ctx, task),
    origin: {
      sessionId: null,
      progressToken: null,
      accepts: task.origin.accepts,
      ...(task.origin.era !== undefined && { era: task.origin.era }),
      rerunOf: task.id,
    },
    ttl: task.ttlMs ?? undefined,
    key: null,
  });
  ctx.logger.info(
    {
      audit: "rerun_requested",
      via,
      taskId: created.id,
      rerunOf: task.id,
      owner: task.owner,
      peer: peer ?? null,
      principal: viewer.principal,
      requestId: ctx.requestId,
    },
    "task re-run from the web view",
  );
  return created;
}

const EmitBody = z.strictObject({ name: z.string().min(1).max(256), payload: z.unknown().optional() });

/**
 * `POST /tasks/api/tasks/:id/events` with `{"name": "…", "payload"?: …}` (admins only): emits an
 * event for the task's owner (docs/durable-execution.md, Events) — what an approver does for an
 * `approve` task with `approval/<taskId>` — and answers `{seq, woken}`. Every task of that owner
 * waiting for the name wakes, not only this one: the task is where the operator saw the wait.
 */
export function emitEvent(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx, req) => {
    if (!viewer.admin) throw new WebRequestError("forbidden", "Only an admin can emit events from the web view");
    const id = ctx.params["id"] ?? "";
    const engine = deps.app.engine;
    const task = await engine.inspect.task(id, viewer.scope);
    if (!task) throw new WebRequestError("not_found", "Task not found");
    const { name, payload } = parseBody(EmitBody, await readJson(deps, req), '{"name": "<event name>", "payload": <JSON>}');
    ctx.logger.info(
      {
        audit: "emit_requested",
        via: "web",
        taskId: id,
        owner: task.owner,
        event: name,
        peer: ctx.peer ?? null,
        principal: viewer.principal,
        requestId: ctx.requestId,
      },
      "event emitted from the web view",
    );
    try {
      return await engine.emit(callerFor(viewer, ctx, task), name, payload ?? null);
    } catch (error) {
      if (error instanceof TaskError && (error.data as { name?: unknown } | undefined)?.name === "event_bytes") {
        throw new WebRequestError("body_too_large", error.message);
      }
      throw error;
    }
  };
}

/** Largest JSON body the web API reads (answers with a long text are the largest). */
const MAX_BODY_BYTES = 256 * 1024;

export async function readJson(deps: ApiDeps, req: IncomingMessage): Promise<unknown> {
  let text: string;
  try {
    text = await readBody(req, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      deps.app.engine.observer.limitRejected("body_bytes");
      throw new WebRequestError("body_too_large", `Request body larger than ${MAX_BODY_BYTES} bytes`);
    }
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WebRequestError("invalid_params", "Invalid body: not JSON");
  }
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown, shape: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  throw new WebRequestError("invalid_params", `Invalid body${where}: ${issue?.message ?? "malformed"}. Send ${shape}`);
}
