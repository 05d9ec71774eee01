import { context, SpanKind, trace, type Attributes } from "@opentelemetry/api";
import type { TaskRecord } from "../../core/task.js";
import type { TaskTracing, TracedWait, WaitBegan, WaitEnded } from "../../runtime/task-tracing.js";
import { contextFrom, currentCarrier, spanContextFrom } from "./trace-carrier.js";
import { tracer } from "./tracer.js";

/** The name of a wait's span: one name, the wait's reason in an attribute (event names are unbounded). */
export const WAIT_SPAN = "mcp-tasks.wait";

/**
 * The engine's wait hooks, as the binding keeps them: each wait of a task's run (a sleep, an event
 * wait, a question) is an `mcp-tasks.wait` span from its start to what ended it, a child of the
 * execution span that waited. A parked run's execution ends at the park, and the wait may end in
 * another process, days later: the waiting run's span context and the wait's start are stored with
 * the wait (the note), and the run that resumes the task records the span with those times and
 * links to it and to the run that parked. Nothing is stored when no span is recording.
 */
export const waitSpans: Required<Pick<TaskTracing, "waitBegan" | "waitEnded">> = {
  waitBegan(): Readonly<Record<string, string>> | undefined {
    const span = trace.getActiveSpan();
    if (!span?.isRecording()) return undefined;
    return currentCarrier(context.active());
  },

  waitEnded(task: TaskRecord, wait: TracedWait, began: WaitBegan, ended: WaitEnded, resumed: boolean): void {
    const parent = contextFrom(began.note);
    const span = tracer().startSpan(
      WAIT_SPAN,
      { kind: SpanKind.INTERNAL, startTime: began.at, attributes: { ...waitAttributes(task, wait), "mcp.task.wait.parked": resumed } },
      parent,
    );
    span.setAttribute("mcp.task.wait.outcome", ended.outcome);
    span.end(ended.at);
    if (!resumed) return;
    const run = trace.getActiveSpan();
    if (!run?.isRecording()) return;
    run.setAttribute("mcp.task.resumed", true);
    run.addLink({ context: span.spanContext(), attributes: { "mcp.task.id": task.id, "mcp.task.link": "wait" } });
    const parked = spanContextFrom(began.note);
    if (parked) run.addLink({ context: parked, attributes: { "mcp.task.id": task.id, "mcp.task.link": "parked_run" } });
  },
};

function waitAttributes(task: TaskRecord, wait: TracedWait): Attributes {
  return {
    "mcp.task.id": task.id,
    "mcp.task.wait.reason": wait.reason,
    ...(wait.eventName !== undefined && { "mcp.task.wait.event": wait.eventName }),
    ...(wait.method !== undefined && { "mcp.method.name": wait.method }),
    ...(wait.until !== undefined && { "mcp.task.wait.until": new Date(wait.until).toISOString() }),
  };
}
