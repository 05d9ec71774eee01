import { RpcCode, TaskError } from "../../../core/errors.js";

/** The protocol revision this era speaks (SEP-2575 stateless lifecycle, SEP-2663 tasks). */
export const PROTOCOL_VERSION = "2026-07-28" as const;

/** X-CAP-1: the extension's id, in capabilities and in `clientCapabilities.extensions`. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** X-CAP-8: the request envelope's `_meta` keys. */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  /** X-CONF-4, X-LEG-6: the 2025-11-25 key that must not appear on an inlined result. */
  relatedTask: "io.modelcontextprotocol/related-task",
} as const;

/** The methods this era serves (X-CAP-3, X-GET, X-UPD, X-CANCEL; tools per the core revision). */
export const METHOD = {
  discover: "server/discover",
  toolsList: "tools/list",
  toolsCall: "tools/call",
  tasksGet: "tasks/get",
  tasksUpdate: "tasks/update",
  tasksCancel: "tasks/cancel",
  subscriptionsListen: "subscriptions/listen",
} as const;

/** X-NOTE: the notifications of a `subscriptions/listen` stream. */
export const NOTIFICATION = {
  subscriptionsAcknowledged: "notifications/subscriptions/acknowledged",
  tasks: "notifications/tasks",
} as const;

/** X-NOTE-8: every notification of a subscription carries the listen request's id under this key. */
export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/**
 * Our own `_meta` keys, for what the extension has no field for (`_meta` is open to
 * implementations; the `io.modelcontextprotocol/` prefix is not ours to use):
 * - `progress` on a DetailedTask (`tasks/get`, `notifications/tasks`): the task's last
 *   `notifications/progress` report `{progress, total?, message?}`. The extension carries no
 *   progress for tasks (X-NOTE-7), yet a requestor's bar should move as under 2025-11-25 (T-PROG-1);
 * - `taskSupport` on a listed tool: how the server decides on a call of it (X-CAP-4:
 *   `forbidden` never a task, `optional` a task when it takes long, `required` always), where
 *   2025-11-25 had `execution.taskSupport` (gone, X-LEG-6), so a requestor can refuse a task wish
 *   the tool does not allow before it calls.
 */
export const OWN_META = { progress: "mcp-tasks/progress", taskSupport: "mcp-tasks/taskSupport" } as const;

/** X-RT-1: the `resultType` discriminator. */
export const RESULT_TYPE = { complete: "complete", task: "task" } as const;

/** X-CAP-6, X-ERR-4, X-DIS-7: -32021, always naming the extension in `data.requiredCapabilities`. */
export function missingTasksCapability(what: string): TaskError {
  return TaskError.protocol(
    RpcCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension declared in this request`,
    {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  );
}

/** X-HTTP-4: -32020, no `data` (the schema defines none). */
export function headerMismatch(message: string): TaskError {
  return TaskError.protocol(RpcCode.HeaderMismatch, `Header mismatch: ${message}`);
}
