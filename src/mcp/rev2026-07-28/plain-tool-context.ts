import type { GatherContext, ToolContext } from "../tool-definition.js";
import type { ProgressSink } from "./progress-stream.js";
import { plainWaits } from "../plain-waits.js";

/**
 * The ToolContext of a plain (non-task) 2026-07-28 call. Its questions go through the call's MRTR
 * rounds (`ask`): a server must not send the client unsolicited requests (SEP-2260). There is no
 * stream unless the call asked for progress (`progress`: see progress-stream.ts); otherwise progress
 * is dropped, as are log messages and a statusMessage (no task to hold it).
 */
export function plainToolContext(ask: GatherContext, owner: string | null, progress?: ProgressSink): ToolContext {
  return {
    taskId: null,
    owner,
    signal: ask.signal,
    can: ask.can,
    elicit: ask.elicit,
    sample: ask.sample,
    progress(value, total, message) {
      progress?.(value, total, message);
    },
    log() {},
    async setStatusMessage() {},
    // No task to resume: nothing to checkpoint.
    step: (_name, fn) => fn(),
    ...plainWaits(ask.signal),
  };
}
