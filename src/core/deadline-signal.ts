/**
 * One AbortSignal that aborts when the first of some other signals aborts, or when a deadline
 * passes — what `AbortSignal.any([...signals, AbortSignal.timeout(ms)])` would give, built from a
 * controller and a timer of our own.
 *
 * Why not the built-ins: on Node 20 a signal held only by `AbortSignal.any()` (the timeout signal
 * above, or a composite whose sources are held weakly) can be garbage-collected before it fires,
 * and the combined signal then never aborts — a drain that never ends, an inline wait that waits
 * for the whole handler (reproduced with `node --expose-gc` and a gc() before the deadline). Here
 * the timer holds the controller until it fires or is cleared, and the listeners on the sources
 * are removed by {@link DeadlineSignal.clear}, so a long-lived source (a polling loop's signal)
 * does not collect one listener per use.
 */

export interface DeadlineSignal {
  /** Aborts with the first source's reason, or with `reason` (default: a TimeoutError) at the deadline. */
  readonly signal: AbortSignal;
  /** Aborts now, with `reason`. */
  abort(reason?: unknown): void;
  /** Stops the timer and lets go of the sources; the signal stays as it is. Call it when done. */
  clear(): void;
}

export interface DeadlineOptions {
  /** The signals whose abort aborts this one (undefined entries are skipped). */
  signals?: readonly (AbortSignal | undefined)[];
  /** Milliseconds until the deadline; none when omitted. */
  timeoutMs?: number;
  /** The reason the deadline aborts with. */
  reason?: unknown;
  /**
   * Whether the timer leaves the process free to exit before it fires. Default false: a deadline
   * that ends a drain or a wait is what the process is waiting for.
   */
  unref?: boolean;
}

export function deadlineSignal(options: DeadlineOptions = {}): DeadlineSignal {
  const controller = new AbortController();
  const sources = (options.signals ?? []).filter((s): s is AbortSignal => s !== undefined);
  let timer: NodeJS.Timeout | undefined;
  const listeners: [AbortSignal, () => void][] = [];
  const clear = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    for (const [source, listener] of listeners.splice(0)) source.removeEventListener("abort", listener);
  };
  const abort = (reason?: unknown): void => {
    clear();
    if (!controller.signal.aborted) controller.abort(reason);
  };
  for (const source of sources) {
    if (source.aborted) {
      abort(source.reason);
      break;
    }
    const listener = (): void => abort(source.reason);
    source.addEventListener("abort", listener, { once: true });
    listeners.push([source, listener]);
  }
  if (options.timeoutMs !== undefined && !controller.signal.aborted) {
    const reason = options.reason ?? new DOMException("The operation was aborted due to timeout", "TimeoutError");
    timer = setTimeout(() => abort(reason), Math.max(0, options.timeoutMs));
    if (options.unref) timer.unref();
  }
  return { signal: controller.signal, abort, clear };
}
