import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TASK_STATUSES } from "../../../core/task-status.js";
import { OWN_META } from "../../wire/rev2026-07-28/wire.js";
import type { RemoteTaskInfo, RemoteTaskProgress } from "../remote-task-info.js";

/** A 2026-07-28 Task (X-TASK-1) or DetailedTask (X-TASK-8), with what its status carries inline. */
export interface DetailedTask {
  /** The Task as both eras' callers read it: `ttlMs`/`pollIntervalMs` as `ttl`/`pollInterval`. */
  task: RemoteTaskInfo;
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
  /** X-GET-3: key → `{method, params}`. */
  inputRequests?: Record<string, unknown>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const STATUSES = new Set<string>(TASK_STATUSES);

/** A CreateTaskResult (flat, X-NEW-1) or a `tasks/get` answer read, or null when it is not a Task. */
export function readDetailedTask(value: unknown): DetailedTask | null {
  if (!isObject(value)) return null;
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = value;
  if (typeof taskId !== "string" || typeof status !== "string" || !STATUSES.has(status)) return null;
  const now = new Date().toISOString();
  const progress = progressOf(value["_meta"]);
  const task: RemoteTaskInfo = {
    taskId,
    status: status as RemoteTaskInfo["status"],
    ...(typeof statusMessage === "string" && { statusMessage }),
    createdAt: typeof createdAt === "string" ? createdAt : now,
    lastUpdatedAt: typeof lastUpdatedAt === "string" ? lastUpdatedAt : typeof createdAt === "string" ? createdAt : now,
    ttl: typeof ttlMs === "number" ? ttlMs : null,
    ...(typeof pollIntervalMs === "number" && { pollInterval: pollIntervalMs }),
    ...(progress !== undefined && { progress }),
  };
  const detailed: DetailedTask = { task };
  if (isObject(value["inputRequests"])) detailed.inputRequests = value["inputRequests"];
  const result = CallToolResultSchema.safeParse(value["result"]);
  if (result.success) detailed.result = withoutResultType(result.data);
  const error = value["error"];
  if (isObject(error) && typeof error["code"] === "number") {
    detailed.error = {
      code: error["code"],
      message: typeof error["message"] === "string" ? error["message"] : "",
      ...(error["data"] !== undefined && { data: error["data"] }),
    };
  }
  return detailed;
}

/** Our server's progress report on a DetailedTask (OWN_META.progress), when there is one. */
function progressOf(meta: unknown): RemoteTaskProgress | undefined {
  if (!isObject(meta)) return undefined;
  const value = meta[OWN_META.progress];
  if (!isObject(value) || typeof value["progress"] !== "number") return undefined;
  return {
    progress: value["progress"],
    ...(typeof value["total"] === "number" && { total: value["total"] }),
    ...(typeof value["message"] === "string" && { message: value["message"] }),
  };
}

/** X-CAP-9's `resultType` is the envelope's, not part of the CallToolResult the application reads. */
export function withoutResultType(result: CallToolResult): CallToolResult {
  const copy: Record<string, unknown> = { ...result };
  delete copy["resultType"];
  return copy as CallToolResult;
}
