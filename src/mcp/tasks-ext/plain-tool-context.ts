import type { GatherContext, ToolContext } from "../tool-definition.js";

/**
 * The ToolContext of a plain (non-task) 2026-07-28 call. Its questions go through the call's MRTR
 * rounds (`ask`): a server must not send the client unsolicited requests (SEP-2260). There is no
 * stream to carry progress on, so progress and log messages are dropped, as is a statusMessage (no
 * task to hold it).
 */
export function plainToolContext(ask: GatherContext): ToolContext {
  return {
    taskId: null,
    signal: ask.signal,
    can: ask.can,
    elicit: ask.elicit,
    sample: ask.sample,
    progress() {},
    log() {},
    async setStatusMessage() {},
    // No task to resume: nothing to checkpoint.
    step: (_name, fn) => fn(),
  };
}
