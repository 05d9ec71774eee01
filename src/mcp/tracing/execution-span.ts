import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { toRpcError } from "../../core/errors.js";
import type { TaskRecord } from "../../core/task.js";
import type { RunResult, TaskContext, TaskRunner } from "../../runtime/task-context.js";
import { boundedErrorType } from "./served-names.js";
import { contextFrom, currentCarrier } from "./trace-carrier.js";
import { tracer } from "./tracer.js";

/** What the race of a handler against its park answers when the run was parked. */
const PARKED: unique symbol = Symbol("parked");

/**
 * Runs each task's handler inside an `execute_tool {name}` span that is a child of the request
 * that created the task — in whichever process runs it, a cluster worker or the next start after
 * a crash — with events for what happens during the run: progress, questions asked and answered
 * (the status moving to input_required and back), checkpoints stored or re-used, the final status.
 */
export function tracedRunner(runner: TaskRunner): TaskRunner {
  return async (task: TaskRecord, ctx: TaskContext): Promise<RunResult> => {
    const carrier = task.origin.trace;
    const parent = carrier ? contextFrom(carrier) : ROOT_CONTEXT;
    const span = tracer().startSpan(
      `execute_tool ${task.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": task.name,
          "mcp.method.name": task.method,
          "mcp.task.id": task.id,
          ...(task.attempt !== undefined && { "mcp.task.attempt": task.attempt }),
          ...(task.ttlMs !== null && { "mcp.task.ttl_ms": task.ttlMs }),
        },
      },
      parent,
    );
    if (!span.isRecording()) return runner(task, ctx);
    const onAbort = (): void => {
      span.addEvent("mcp.task.aborted", { reason: String(ctx.signal.reason) });
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await context.with(trace.setSpan(parent, span), () =>
        Promise.race([runner(task, tracedContext(ctx, span)), ctx.parked.then((): typeof PARKED => PARKED)]),
      );
      if (result === PARKED) {
        // Let go: the run ends here without an outcome; the wait's span and the run that resumes
        // the task follow (wait-spans.ts).
        span.setAttribute("mcp.task.parked", true);
        span.addEvent("mcp.task.parked");
        // Not awaited: `finally` ends the span now, and the call, like the handler's, never settles.
        return new Promise<never>(() => {});
      }
      if (ctx.signal.aborted) {
        endedByAbort(span, ctx.signal.reason);
        return result;
      }
      const status = result.failed ? "failed" : "completed";
      span.setAttribute("mcp.task.status", status);
      span.addEvent("mcp.task.status", { "mcp.task.status": status });
      if (result.failed) span.setAttributes({ "error.type": "tool_error" }).setStatus({ code: SpanStatusCode.ERROR });
      return result;
    } catch (error) {
      if (ctx.signal.aborted) {
        endedByAbort(span, ctx.signal.reason);
      } else {
        const { body } = toRpcError(error);
        span.setAttributes({ "mcp.task.status": "failed", "error.type": boundedErrorType(String(body.code)) });
        span.addEvent("mcp.task.status", { "mcp.task.status": "failed" });
        span.setStatus({ code: SpanStatusCode.ERROR, message: body.message });
      }
      throw error;
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
      span.end();
    }
  };
}

/**
 * The end of a run its signal aborted: why, and the status the task took for it — `cancelled` for
 * a cancel, `failed` for a ttl that ran out (the sweeper fails it). A lost lease or a drain hands
 * the task on unchanged, so the run says nothing of its status.
 */
function endedByAbort(span: Span, reason: unknown): void {
  span.setAttribute("mcp.task.abort_reason", String(reason));
  const status = reason === "cancelled" ? "cancelled" : reason === "expired" ? "failed" : undefined;
  if (status === undefined) return;
  span.setAttribute("mcp.task.status", status);
  span.addEvent("mcp.task.status", { "mcp.task.status": status });
  if (status === "failed")
    span
      .setAttributes({ "error.type": "expired" })
      .setStatus({ code: SpanStatusCode.ERROR, message: "the task's ttl elapsed before it finished" });
}

/**
 * A question's params with the execution's trace context in `_meta` (SEP-414): the question is
 * stored and may be put to the requestor by another process, much later, so the context goes with
 * it, and a requestor that traces its answer joins the task's trace.
 */
function withTraceMeta(params: unknown, span: Span): unknown {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return params;
  const carrier = currentCarrier(trace.setSpan(context.active(), span));
  if (!carrier) return params;
  const fields = params as Record<string, unknown>;
  const meta = typeof fields["_meta"] === "object" && fields["_meta"] !== null ? (fields["_meta"] as Record<string, unknown>) : {};
  return { ...fields, _meta: { ...meta, ...carrier } };
}

function tracedContext(ctx: TaskContext, span: Span): TaskContext {
  return {
    ...ctx,
    progress(progress, total, message) {
      span.addEvent("mcp.task.progress", {
        "mcp.task.progress": progress,
        ...(total !== undefined && { "mcp.task.progress.total": total }),
        ...(message !== undefined && { "mcp.task.progress.message": message }),
      });
      ctx.progress(progress, total, message);
    },
    async request(method, params) {
      span.addEvent("mcp.task.input.requested", { "mcp.method.name": method });
      span.addEvent("mcp.task.status", { "mcp.task.status": "input_required" });
      try {
        const answer = await ctx.request(method, withTraceMeta(params, span));
        span.addEvent("mcp.task.input.answered", { "mcp.method.name": method });
        span.addEvent("mcp.task.status", { "mcp.task.status": "working" });
        return answer;
      } catch (error) {
        span.addEvent("mcp.task.input.answered", { "mcp.method.name": method, "error.type": String(toRpcError(error).body.code) });
        throw error;
      }
    },
    async step(name, fn) {
      let ran = false;
      const value = await ctx.step(name, async () => {
        ran = true;
        return fn();
      });
      span.addEvent(ran ? "mcp.task.step.stored" : "mcp.task.step.reused", { "mcp.task.step": name });
      return value;
    },
  };
}
