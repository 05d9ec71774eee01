import { TaskError } from "../core/errors.js";
import { pause } from "../core/pause.js";
import type { ToolContext } from "./tool-definition.js";

/** The time a `sleep(ms | { until })` ends, in ms since the epoch. */
export function wakeTime(duration: number | { until: Date | number }): number {
  if (typeof duration === "number") return Date.now() + checkedMs(duration, "ms");
  const until = duration?.until instanceof Date ? duration.until.getTime() : duration?.until;
  if (typeof until !== "number" || !Number.isFinite(until)) {
    throw new TypeError("ctx.sleep: { until } must be a Date or a number of ms since the epoch");
  }
  return until;
}

export function checkedMs(ms: number, what: string): number {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`ctx: ${what} must be a finite number of milliseconds, at least 0`);
  }
  return ms;
}

/**
 * The waits of a plain (non-task) call, in either era: there is no task to park or to wake, so a
 * sleep waits on the call's own connection and an event cannot be waited for.
 */
export function plainWaits(signal: AbortSignal): Pick<ToolContext, "sleep" | "waitForEvent"> {
  return {
    sleep: (duration) => pause(Math.max(0, wakeTime(duration) - Date.now()), signal),
    async waitForEvent() {
      throw new TaskError("invalid_params", "waitForEvent needs the tool to be called as a task");
    },
  };
}
