import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from "@opentelemetry/api";
import { AsyncLocalStorage } from "node:async_hooks";
import { InvalidArgumentError } from "commander";
import { parseTraceparent } from "../mcp/tracing/trace-carrier.js";

/** `--traceparent`: a W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`), checked as it is parsed. */
export function traceparentValue(value: string): string {
  if (!parseTraceparent(value))
    throw new InvalidArgumentError("expected a W3C traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>");
  return value.trim();
}

/**
 * A context manager on AsyncLocalStorage, for a process that runs without the SDK but was given a
 * parent: without any, the API's context does not follow awaits and the parent would be lost.
 */
class LocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const run = (...args: unknown[]): unknown => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/**
 * Runs `fn` as a child of the given traceparent (a script's own trace): the requests it sends
 * carry it, and with the SDK on, the command's client spans are its children.
 */
export function underTraceparent<T>(traceparent: string | undefined, fn: () => Promise<T>): Promise<T> {
  const parent = parseTraceparent(traceparent);
  if (!parent) return fn();
  // A no-op when the SDK registered its own (setGlobalContextManager keeps the first).
  context.setGlobalContextManager(new LocalContextManager());
  return context.with(trace.setSpanContext(context.active(), parent), fn);
}
