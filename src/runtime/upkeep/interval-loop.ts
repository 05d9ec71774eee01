import type { Logger } from "../../core/logger.js";

export interface IntervalLoopOptions {
  /** One pass of the work. A rejection is logged as `failure` and the loop goes on. */
  run: () => Promise<void>;
  intervalMs: number;
  logger: Logger;
  /** The log line of a failed pass (it will be retried on the next interval). */
  failure: string;
}

/**
 * Background upkeep on a fixed interval, the way every periodic job of the runtime runs:
 * - single-flight: a tick that finds a pass in progress joins it instead of starting a second one,
 *   so a slow store is never hit by overlapping passes;
 * - the timer is unref'd: upkeep alone never keeps the process alive;
 * - a pass that throws is logged and retried on the next tick, never an unhandled rejection.
 */
export class IntervalLoop {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;

  constructor(private readonly options: IntervalLoopOptions) {}

  /** Starts ticking; the first pass runs one interval from now. A second start() is a no-op. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.options.intervalMs);
    this.timer.unref();
  }

  /** No further ticks; a pass in progress finishes on its own. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass now, or the one in progress. Never rejects. */
  runOnce(): Promise<void> {
    this.pass ??= this.guarded().finally(() => (this.pass = null));
    return this.pass;
  }

  private async guarded(): Promise<void> {
    try {
      await this.options.run();
    } catch (err) {
      this.options.logger.error({ err }, this.options.failure);
    }
  }
}
