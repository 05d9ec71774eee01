import { trace } from "@opentelemetry/api";
import type Pretty from "pino-pretty";
import { censorCredentials } from "./credential-censor.js";
import { fdDestination } from "./fd-destination.js";
import { JsonLineLogger, type LineDestination } from "./json-line-logger.js";
import { OutcomeLineBatching } from "./outcome-line-batching.js";
import { optionalPackage } from "./optional-package.js";

/**
 * Logs on stderr (in stdio mode stdout carries protocol messages only): JSON lines for log
 * shipping, or readable lines when stderr is a terminal and someone is watching it — the same
 * fields, redaction included. `destination` is for tests.
 *
 * Each line is written synchronously: the `write` has returned before the call that logged it
 * goes on, so an audit line logged before an answer (a task's `created` line before its
 * CreateTaskResult) is in the kernel — the pipe or file behind stderr — before the answer is
 * sent, and a kill -9 of the process cannot take it along. An asynchronous destination kept
 * the lines logged while a write was in flight in the process's memory, acknowledged or not.
 * The one exception, on the JSON destination: the audit lines of handler outcomes, which no
 * answer waits on, are batched until the promise jobs running now are done
 * ({@link OutcomeLineBatching}, which says exactly what a kill -9 can lose).
 */
export function createLogger(level: string, destination: LineDestination = defaultDestination()): JsonLineLogger {
  return new JsonLineLogger({ level, base: { service: "mcp-tasks" }, format: censorCredentials, mixin: traceFields }, destination);
}

/**
 * The trace and span of the request or task a line is about, when one is traced: logs and traces
 * join on them (Grafana, Datadog). Nothing when tracing is off (no span is active).
 */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}

function defaultDestination(): LineDestination {
  // pino-pretty (and its colour and date libraries) is only loaded when a terminal watches stderr,
  // and only if installed: an optional peer dependency, without which a terminal gets JSON lines.
  const pretty =
    !process.stderr.isTTY || process.env["MCP_TASKS_LOG_FORMAT"] === "json" ? null : optionalPackage<typeof Pretty>("pino-pretty");
  if (pretty === null) {
    const batching = new OutcomeLineBatching(fdDestination(2));
    process.on("exit", () => batching.flush());
    return batching;
  }
  // One line per event: a terminal shows the banner and the web view's sign-in link above a stream
  // of audit events, and multi-line objects would push them off screen.
  return pretty({
    destination: 2,
    colorize: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
    singleLine: true,
    sync: true,
  });
}
