import { TaskError } from "../../core/errors.js";
import type { ToolContext } from "../tool-definition.js";

/**
 * The ToolContext of a plain (non-task) 2026-07-28 call. There is no stream to carry progress, and
 * a server must not send unsolicited requests (SEP-2260): asking the requestor would need an MRTR
 * `InputRequiredResult` round, which this server does not serve yet, so a plain call cannot ask.
 */
export function plainToolContext(signal: AbortSignal): ToolContext {
  const cannotAsk = (): never => {
    throw new TaskError("method_not_found", "This call cannot ask its requestor anything: it is not running as a task (input on a plain 2026-07-28 call needs MRTR, not served)");
  };
  return {
    taskId: null,
    signal,
    can: { elicit: false, sample: false },
    progress() {},
    async setStatusMessage() {},
    elicit: async () => cannotAsk(),
    sample: async () => cannotAsk(),
  };
}
