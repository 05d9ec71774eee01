/**
 * An abort whose `AbortSignal` is made only when something asks for it. A request answered as
 * plain JSON is nearly always answered without anything listening for its abort (a `tasks/get`
 * never does), and an AbortController with its signal was a measurable part of such a request's
 * CPU. Aborting before the signal exists is remembered: a signal asked for later is born aborted,
 * with the same reason.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private ended: { reason: unknown } | undefined;

  /** Whether {@link abort} has been called. */
  get aborted(): boolean {
    return this.ended !== undefined;
  }

  /** The signal, made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.ended.reason);
    }
    return this.controller.signal;
  }

  /** Aborts, once: later calls change nothing (as AbortController.abort). */
  abort(reason: unknown): void {
    if (this.ended) return;
    this.ended = { reason };
    this.controller?.abort(reason);
  }
}
