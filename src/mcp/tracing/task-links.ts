import { trace, type Span } from "@opentelemetry/api";
import type { TaskRecord } from "../../core/task.js";
import type { TaskTracing } from "../../runtime/task-tracing.js";
import { spanContextFrom } from "./trace-carrier.js";

/** Spans already linked to their task (a wait reads its task more than once). */
const linked = new WeakSet<Span>();

/**
 * The engine's {@link TaskTracing}, as the binding keeps it: the span of the request that read
 * a task (a poll, a wait, an answer, a cancel, the result's fetch) gets the task's id and status
 * and a link to the task's trace — a link, not a parent, so a task polled ten thousand times is
 * still one small trace, and a sampler may drop the polls.
 */
export const linkingTaskTracing: TaskTracing = {
  taskRead(task: TaskRecord): void {
    const span = trace.getActiveSpan();
    if (!span?.isRecording()) return;
    span.setAttribute("mcp.task.id", task.id);
    span.setAttribute("mcp.task.status", task.status);
    if (linked.has(span)) return;
    linked.add(span);
    const origin = spanContextFrom(task.origin.trace);
    if (origin && origin.traceId !== span.spanContext().traceId) span.addLink({ context: origin, attributes: { "mcp.task.id": task.id } });
  },
};

/** Marks the active span (the creating request's) as the root of the task it created. */
export function noteCreatedTask(task: TaskRecord): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.setAttribute("mcp.task.id", task.id);
  span.setAttribute("mcp.task.status", task.status);
  if (task.ttlMs !== null) span.setAttribute("mcp.task.ttl_ms", task.ttlMs);
}

/** Sets the status the active span's answer shows for its task (an inline answer: the task's end). */
export function noteTaskStatus(task: TaskRecord): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttribute("mcp.task.status", task.status);
}
