import type { ReceiverMethod, TaskEra } from "../era.js";
import { NEEDS_STREAM } from "../era.js";
import { answerTaskCall } from "../handlers/tools-call.js";
import { plainTasksResult } from "./plain-result.js";
import { attachStatusNotifications } from "./status-notifications.js";
import { tasksCancel } from "./tasks-cancel.js";
import { tasksGet } from "./tasks-get.js";
import { tasksList } from "./tasks-list.js";
import { awaitResultOf, tasksResult } from "./tasks-result.js";
import { setLevel } from "./set-log-level.js";
import { peerOf } from "../requestor/rev2025-11-25/peer.js";
import { requestMaybeAsTask } from "../requestor/rev2025-11-25/task-augmented-request.js";
import { wire20251125 as wire } from "../wire/rev2025-11-25/codec.js";

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
  id: wire.revision,
  wire,

  // One table. A receiver's tasks never ask their requestor anything: its tasks/result only waits
  // (T-RES-3). Plain JSON (T-GET-4): a client polling asked for no stream; a task-augmented
  // tools/call answers with its CreateTaskResult at once (T-NEW-2), the task's progress and
  // notifications going on other streams.
  methods: {
    "tasks/get": {
      session: (session, params, request) => get(session.engine, params, request),
      receiver: get,
      plain: (host, params, request) => get(host.engine, params, request),
    },
    "tasks/list": {
      session: (session, params, request) => list(session.engine, params, request),
      receiver: list,
      plain: (host, params, request) => list(host.engine, params, request),
    },
    "tasks/cancel": {
      session: (session, params, request) => cancel(session.engine, params, request),
      receiver: cancel,
      plain: (host, params, request) => cancel(host.engine, params, request),
    },
    "tasks/result": {
      session: (session, params, request) => tasksResult(session, params, request.caller, request),
      receiver: (engine, params, request) => awaitResultOf(engine, params, request.caller, request.signal),
      plain: plainTasksResult,
    },
    "tools/call": {
      plain: async (host, params, request) => {
        // A plain tools/call runs the tool and may stream (progress, elicitation).
        if (wire.taskParamsOf(params) === undefined) return NEEDS_STREAM;
        return answerTaskCall(host, params, {
          caller: request.caller,
          sessionId: request.sessionId,
          capabilities: request.clientCapabilities,
        });
      },
    },
  },

  attachSession: attachStatusNotifications,

  setLogLevel: setLevel,

  // T-CAP-3: only a request the client lists under tasks.requests goes as a task it hosts.
  requestOfClient: (server, method, params, schema, options) =>
    requestMaybeAsTask(peerOf(server, { relatedRequestId: options.relatedRequestId }), method, params, schema, {
      signal: options.signal,
      ...(options.ttl !== undefined && { ttl: options.ttl }),
    }),
} satisfies TaskEra;
