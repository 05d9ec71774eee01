import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { toRpcError } from "../../core/errors.js";
import { currentCarrier } from "./trace-carrier.js";
import { tracer } from "./tracer.js";

/**
 * Runs one request a requestor sends inside its CLIENT span (`{mcp.method.name} {target}`, as the
 * MCP conventions name it); the request's `_meta` then carries this span's context
 * ({@link traceMeta}), so the server's spans join the requestor's trace.
 */
export async function inClientSpan<T>(
  method: string,
  target: string | undefined,
  run: () => Promise<T>,
  attributes: Record<string, string> = {},
  outcomeOf?: (value: T) => { errorType: string } | undefined,
): Promise<T> {
  const span = tracer().startSpan(target === undefined ? method : `${method} ${target}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      "mcp.method.name": method,
      ...(method === "tools/call" && target !== undefined && { "gen_ai.tool.name": target, "gen_ai.operation.name": "execute_tool" }),
      ...attributes,
    },
  });
  try {
    const value = await context.with(trace.setSpan(context.active(), span), run);
    // An answer that is a failure of its own kind (a tool result with `isError`), as the server's span says it.
    const failed = outcomeOf?.(value);
    if (failed) {
      span.setAttribute("error.type", failed.errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return value;
  } catch (error) {
    const { body } = toRpcError(error);
    span.setAttribute("error.type", String(body.code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: body.message });
    throw error;
  } finally {
    span.end();
  }
}

/** `meta` with the active trace context's fields added (SEP-414: `traceparent`, `tracestate`, `baggage`); `meta` itself when none is active. */
export function traceMeta(meta: Record<string, unknown> = {}): Record<string, unknown> {
  const carrier = currentCarrier();
  return carrier ? { ...meta, ...carrier } : meta;
}

/** `{ _meta }` with the active trace context, to spread into a request's params; nothing when none is active. */
export function traceMetaParams(): { _meta?: Record<string, unknown> } {
  const carrier = currentCarrier();
  return carrier ? { _meta: { ...carrier } } : {};
}
