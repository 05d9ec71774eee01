import type { SessionWire } from "../wire-codec.js";
import { webhookMetaOf } from "../webhook-meta.js";
import { taskStatusNotification } from "./client-status-notification.js";
import { logMessage } from "./log-message.js";
import { operationTrace } from "./operation-trace.js";
import { streamNotificationOf } from "./stream-notifications.js";
import { MODEL_IMMEDIATE_RESPONSE_META_KEY, RELATED_TASK_META_KEY, relatedTaskIdOf, toWireTask } from "./wire.js";

/**
 * The wire of protocol revision 2025-11-25, as the server's binding (`src/mcp/rev2025-11-25/`) and
 * the requestor (`src/mcp/requestor/rev2025-11-25/`) read and build it: pure functions, no I/O.
 */
export const wire20251125 = {
  revision: "2025-11-25" as const,
  // The engine's own codes, in the server-error range this revision leaves to implementations.
  ownErrorCodes: {},

  // T-CAP-1/2: tasks.list, tasks.cancel and tasks.requests.tools.call.
  serverCapabilities: () => ({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),

  // T-INPUT-3: a task's questions travel on the stream of the tasks/result waiting on it.
  questionStreamMethod: "tasks/result",

  operationTrace,

  // T-NEW-1: a request is task-augmented by its `task` param.
  taskParamsOf: (params) => params?.["task"],
  withoutTaskParams: (params) => {
    const { task: _task, ...plain } = params ?? {};
    return plain;
  },
  requestedTtlOf: (taskParams) =>
    typeof taskParams === "object" && taskParams !== null ? (taskParams as Record<string, unknown>)["ttl"] : undefined,
  idempotencyKeyOf: (params) => params?.["idempotencyKey"],
  // An extension of this server (docs/webhooks.md): the requestor's own webhook for the task.
  webhookRequestOf: webhookMetaOf,

  // T-NEW-2: a CreateTaskResult, not the tool's result; T-NEW-3: optional model-immediate-response.
  encodeCreated: (task, immediateResponse) => ({
    task: toWireTask(task),
    ...(immediateResponse !== undefined && { _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: immediateResponse } }),
  }),

  streamNotificationOf,
  logMessage,

  relatedTaskMeta: (taskId) => ({ [RELATED_TASK_META_KEY]: { taskId } }),
  relatedTaskOf: relatedTaskIdOf,

  // T-TOOL-1: execution.taskSupport, beside whatever else the tool's execution says.
  listedWithTaskSupport: (tool, support) => ({ ...tool, execution: { ...tool.execution, taskSupport: support } }),
  // Its one task declaration is `capabilities.tasks`, whatever it holds.
  clientFollowsTasks: (capabilities) => capabilities?.tasks !== undefined,
  hostedStatusNotification: taskStatusNotification,
} satisfies SessionWire;
