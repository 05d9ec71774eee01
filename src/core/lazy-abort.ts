import type { AbortListener, AbortWatch } from "./abort-watch.js";

/**
 * An abort whose `AbortSignal` is made only when something asks for it. A request answered as
 * plain JSON is nearly always answered without anything listening for its abort (a `tasks/get`
 * never does), and an AbortController with its signal was a measurable part of such a request's
 * CPU. Aborting before the signal exists is remembered: a signal asked for later is born aborted,
 * with the same reason. A wait that only needs to hear the abort listens to this object itself
 * ({@link AbortWatch}), and no signal is made for it at all.
 */
export class LazyAbort implements AbortWatch {
  private controller: AbortController | undefined;
  private ended: { reason: unknown } | undefined;
  /** Its listeners: none, one, or several (most requests have at most one). */
  private listeners: AbortListener | AbortListener[] | null = null;

  /** Whether {@link abort} has been called. */
  get aborted(): boolean {
    return this.ended !== undefined;
  }

  /** What {@link abort} was called with; undefined before. */
  get reason(): unknown {
    return this.ended?.reason;
  }

  /** The signal, made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.ended.reason);
    }
    return this.controller.signal;
  }

  /** Aborts, once: later calls change nothing (as AbortController.abort). Listeners hear it in the order they were added. */
  abort(reason: unknown): void {
    if (this.ended) return;
    this.ended = { reason };
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners !== null) for (const listener of Array.isArray(listeners) ? listeners : [listeners]) call(listener);
  }

  /** Hears the abort once (none after it: an `AbortSignal`'s listeners added late are not called either). */
  addEventListener(_type: "abort", listener: AbortListener): void {
    if (this.ended) return;
    const listeners = this.listeners;
    if (listeners === null) this.listeners = listener;
    else if (Array.isArray(listeners)) listeners.push(listener);
    else this.listeners = [listeners, listener];
  }

  removeEventListener(_type: "abort", listener: AbortListener): void {
    const listeners = this.listeners;
    if (listeners === listener) this.listeners = null;
    else if (Array.isArray(listeners)) {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    }
  }
}

function call(listener: AbortListener): void {
  if (typeof listener === "function") listener();
  else listener.handleEvent();
}
