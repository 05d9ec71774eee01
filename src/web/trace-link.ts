import type { TaskRecord } from "../core/task.js";
import { spanContextFrom } from "../mcp/tracing/trace-carrier.js";

/** Where a trace viewer's URL template puts the trace id. */
export const TRACE_ID_PLACEHOLDER = "{traceId}";

/**
 * Checks a trace viewer's URL template (`https://tracing.example/trace/{traceId}`): an http(s)
 * URL naming {@link TRACE_ID_PLACEHOLDER}, so every task's link leads to its own trace and the
 * page never links to a script URL. Returns the reason it is refused, or undefined.
 */
export function traceUrlProblem(template: string): string | undefined {
  if (!template.includes(TRACE_ID_PLACEHOLDER))
    return `a trace URL template must contain ${TRACE_ID_PLACEHOLDER}, e.g. https://tracing.example/trace/${TRACE_ID_PLACEHOLDER}`;
  let url: URL;
  try {
    url = new URL(template.replaceAll(TRACE_ID_PLACEHOLDER, "0"));
  } catch {
    return `a trace URL template must be an absolute http(s) URL, not "${template}"`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `a trace URL template must be an http(s) URL, not ${url.protocol}`;
  return undefined;
}

/** The trace the task belongs to (its creating request's), or null when that request was not traced. */
export function traceIdOf(task: TaskRecord): string | null {
  return spanContextFrom(task.origin.trace)?.traceId ?? null;
}

/** The template with the trace id in place (a trace id is 32 hex digits: nothing to escape). */
export function traceLink(template: string, traceId: string): string {
  return template.replaceAll(TRACE_ID_PLACEHOLDER, traceId);
}
