import { TaskError } from "../core/errors.js";
import type { LooseParams } from "./request-schemas.js";

/** The `taskId` of tasks/get|result|cancel: the only source of truth (T-META-2). */
export function requireTaskId(params: LooseParams): string {
  const taskId = params?.["taskId"];
  if (typeof taskId !== "string" || taskId.length === 0) {
    throw TaskError.invalidParams("Invalid params: taskId must be a non-empty string");
  }
  if (taskId.length > 256) throw TaskError.invalidParams("Invalid params: taskId is too long");
  return taskId;
}

/** Wraps a lookup error with the operation, as T-ERR-6's examples do. */
export function withOperation(prefix: string, error: unknown): unknown {
  if (error instanceof TaskError && (error.kind === "not_found" || error.kind === "expired")) {
    return new TaskError(error.kind, `${prefix}: ${error.message}`);
  }
  return error;
}
