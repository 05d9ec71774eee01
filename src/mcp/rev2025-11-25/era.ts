import { webhookMetaOf } from "../webhook-request.js";
import type { ReceiverMethod, TaskEra } from "../era.js";
import { NEEDS_STREAM } from "../era.js";
import { answerTaskCall } from "../handlers/tools-call.js";
import { plainTasksResult } from "./plain-result.js";
import { attachStatusNotifications } from "./status-notifications.js";
import { tasksCancel } from "./tasks-cancel.js";
import { tasksGet } from "./tasks-get.js";
import { tasksList } from "./tasks-list.js";
import { awaitResultOf, tasksResult } from "./tasks-result.js";
import { MODEL_IMMEDIATE_RESPONSE_META_KEY, RELATED_TASK_META_KEY, relatedTaskIdOf, toWireTask } from "./wire.js";
import { taskStatusNotification } from "./client-status-notification.js";
import { logMessage, setLevel } from "./log-messages.js";
import { peerOf } from "./requestor/peer.js";
import { requestMaybeAsTask } from "./requestor/task-augmented-request.js";
import { streamNotificationOf } from "./stream-notifications.js";
import { upstreamTasks2025 } from "./requestor/upstream-tasks.js";
import { operationTrace } from "./operation-trace.js";

/** The operations that need nothing but the engine (T-GET-1, T-LIST, T-CANCEL). */
const get: ReceiverMethod = async (engine, params, request) => ({ ...(await tasksGet(engine, params, request.caller)) });
const list: ReceiverMethod = (engine, params, request) => tasksList(engine, params, request.caller);
const cancel: ReceiverMethod = async (engine, params, request) => ({ ...(await tasksCancel(engine, params, request.caller)) });

/**
 * Protocol revision 2025-11-25: sessions opened by `initialize`, `params.task` asks for a task,
 * `tasks/get|result|list|cancel`, a blocking `tasks/result` whose stream also carries the task's
 * questions, and `notifications/tasks/status`.
 */
export const rev20251125 = {
  kind: "session",
  id: "2025-11-25" as const,
  // The engine's own codes, in the server-error range this revision leaves to implementations.
  ownErrorCodes: {},

  operationTrace,

  // T-CAP-1/2: tasks.list, tasks.cancel and tasks.requests.tools.call.
  serverCapabilities: () => ({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),

  // Tasks that never ask their requestor anything: tasks/result only waits (T-RES-3).
  receiverMethods: {
    "tasks/get": get,
    "tasks/list": list,
    "tasks/cancel": cancel,
    "tasks/result": (engine, params, request) => awaitResultOf(engine, params, request.caller, request.signal),
  },

  sessionMethods: {
    "tasks/get": (session, params, request) => get(session.engine, params, request),
    "tasks/list": (session, params, request) => list(session.engine, params, request),
    "tasks/cancel": (session, params, request) => cancel(session.engine, params, request),
    "tasks/result": (session, params, request) => tasksResult(session, params, request.caller, request),
  },

  // T-GET-4: a client polling asked for no stream. A task-augmented tools/call answers with its
  // CreateTaskResult at once (T-NEW-2); the task's progress and notifications go on other streams.
  plainMethods: {
    "tasks/get": (host, params, request) => get(host.engine, params, request),
    "tasks/list": (host, params, request) => list(host.engine, params, request),
    "tasks/cancel": (host, params, request) => cancel(host.engine, params, request),
    "tasks/result": plainTasksResult,
    "tools/call": async (host, params, request) => {
      // A plain tools/call runs the tool and may stream (progress, elicitation).
      if (params?.["task"] === undefined) return NEEDS_STREAM;
      return answerTaskCall(host, params, {
        caller: request.caller,
        sessionId: request.sessionId,
        capabilities: request.clientCapabilities,
      });
    },
  },

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

  attachSession: attachStatusNotifications,

  // T-INPUT-3: a task's questions travel on the stream of the tasks/result waiting on it.
  questionStreamMethod: "tasks/result",

  streamNotificationOf,

  upstream: upstreamTasks2025,

  logMessage,
  setLogLevel: setLevel,

  // T-CAP-3: only a request the client lists under tasks.requests goes as a task it hosts.
  requestOfClient: (server, method, params, schema, options) =>
    requestMaybeAsTask(peerOf(server, { relatedRequestId: options.relatedRequestId }), method, params, schema, {
      signal: options.signal,
      ...(options.ttl !== undefined && { ttl: options.ttl }),
    }),

  relatedTaskMeta: (taskId) => ({ [RELATED_TASK_META_KEY]: { taskId } }),
  relatedTaskOf: relatedTaskIdOf,

  // T-TOOL-1: execution.taskSupport, beside whatever else the tool's execution says.
  listedWithTaskSupport: (tool, support) => ({ ...tool, execution: { ...tool.execution, taskSupport: support } }),
  // Its one task declaration is `capabilities.tasks`, whatever it holds.
  clientFollowsTasks: (capabilities) => capabilities?.tasks !== undefined,
  hostedStatusNotification: taskStatusNotification,
} satisfies TaskEra;
