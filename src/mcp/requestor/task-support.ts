import { TaskError } from "../../core/errors.js";
import type { TaskSupport } from "../tool-definition.js";

/**
 * Whether to call a tool as a task (T-CAP-3, T-TOOL-1..4):
 * - never when the server did not declare `tasks.requests.tools.call` (T-TOOL-1) or the tool's
 *   `execution.taskSupport` is absent/"forbidden" (T-TOOL-2);
 * - always for "required" (T-TOOL-4);
 * - for "optional", the caller's choice (T-TOOL-3), plain by default.
 * An explicit wish the receiver does not allow is refused here, before anything is sent.
 */
export function decideTaskCall(input: {
  tool: string;
  serverSupportsTasks: boolean;
  support: TaskSupport;
  wanted: boolean | undefined;
}): boolean {
  const { tool, serverSupportsTasks, support, wanted } = input;
  if (!serverSupportsTasks) {
    if (wanted === true) {
      throw new TaskError("method_not_found", `Cannot call ${tool} as a task: the server does not declare tasks.requests.tools.call`);
    }
    return false;
  }
  if (support === "required") {
    if (wanted === false)
      throw new TaskError("method_not_found", `Tool ${tool} must be called as a task (execution.taskSupport is "required")`);
    return true;
  }
  if (support === "forbidden") {
    if (wanted === true)
      throw new TaskError("method_not_found", `Tool ${tool} cannot be called as a task (execution.taskSupport is "forbidden")`);
    return false;
  }
  return wanted ?? false;
}
