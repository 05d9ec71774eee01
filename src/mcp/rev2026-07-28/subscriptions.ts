import { TaskError } from "../../core/errors.js";
import type { AbortWatch } from "../../core/abort-watch.js";
import type { Caller } from "../../core/caller.js";
import type { TaskChange, TaskEngine } from "../../runtime/task-engine.js";
import type { MessageStream, StatelessHost, StatelessHttpRequest } from "../era.js";
import type { LooseParams } from "../request-schemas.js";
import type { Envelope } from "../wire/rev2026-07-28/envelope.js";
import { detailedTask } from "../wire/rev2026-07-28/task-wire.js";
import { META_SUBSCRIPTION_ID, missingTasksCapability, NOTIFICATION, RESULT_TYPE } from "../wire/rev2026-07-28/wire.js";

/** The `taskIds` of a `subscriptions/listen` filter, or undefined when it names none. */
function taskIdsOf(params: LooseParams): string[] | undefined {
  const filter = params?.["notifications"];
  if (typeof filter !== "object" || filter === null || Array.isArray(filter))
    throw TaskError.invalidParams("Invalid params: notifications must be an object");
  const ids = (filter as Record<string, unknown>)["taskIds"];
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string"))
    throw TaskError.invalidParams("Invalid params: notifications.taskIds must be an array of strings");
  return [...new Set(ids as string[])];
}

/**
 * `subscriptions/listen` for task notifications (X-NOTE). A filter naming `taskIds` needs the
 * extension declared (-32021, X-NOTE-4). The ack comes first and lists the ids this caller may
 * see — unknown and foreign ones are left out, like any lookup (X-SEC-2) — and no other filter
 * type, none being served (X-NOTE-8). Then one `notifications/tasks` with the DetailedTask, as
 * `tasks/get` would answer then (X-NOTE-5), for each task's current state and every change, each
 * with the subscription id. Once every task is terminal the stream ends with the listen result.
 */
export async function subscriptionsListen(
  host: StatelessHost,
  params: LooseParams,
  envelope: Envelope,
  request: StatelessHttpRequest,
  subscriptionId: string | number,
): Promise<MessageStream> {
  const requested = taskIdsOf(params);
  if (requested !== undefined && !envelope.declaresTasks) throw missingTasksCapability("notifications about tasks");
  const accepted: string[] = [];
  for (const id of requested ?? []) {
    try {
      await host.engine.get(id, request.caller);
      accepted.push(id);
    } catch (error) {
      if (!(error instanceof TaskError && (error.kind === "not_found" || error.kind === "expired" || error.kind === "invalid_params")))
        throw error;
    }
  }
  // The caller and the abort, not the request: its copy of the headers is not kept while the stream waits.
  return stream(host.engine, request.caller, request.abandoned, subscriptionId, accepted);
}

/**
 * The subscription's messages, pushed as they come: one {@link TaskEngine.follow} per task (a
 * suspended call each while it waits, no generator or queue per stream), and the stream's end
 * once every task is terminal.
 */
function stream(engine: TaskEngine, caller: Caller, signal: AbortWatch, subscriptionId: string | number, taskIds: string[]): MessageStream {
  return (send) => {
    const meta = { [META_SUBSCRIPTION_ID]: subscriptionId };
    send({
      jsonrpc: "2.0",
      method: NOTIFICATION.subscriptionsAcknowledged,
      params: { _meta: meta, notifications: taskIds.length > 0 ? { taskIds } : {} },
    });
    return new Promise<void>((resolve) => {
      let running = taskIds.length;
      const finish = (): void => {
        signal.removeEventListener("abort", finish);
        // The subscription ends gracefully: its result closes the stream (SubscriptionsListenResult).
        if (!signal.aborted) send({ jsonrpc: "2.0", id: subscriptionId, result: { resultType: RESULT_TYPE.complete, _meta: meta } });
        resolve();
      };
      const ended = (): void => {
        if (--running === 0) finish();
      };
      if (running === 0) return finish();
      // The requestor hung up: the stream stops now; each follow ends at its next step.
      signal.addEventListener("abort", finish);
      for (const taskId of taskIds) {
        let last = "";
        const step = async ({ task }: TaskChange): Promise<void> => {
          const pending = task.status === "input_required" ? await engine.pendingInputs(task.id, caller) : [];
          const { resultType: _resultType, ...detailed } = detailedTask(task, pending);
          const shown = JSON.stringify(detailed);
          if (shown === last || signal.aborted) return;
          last = shown;
          send({ jsonrpc: "2.0", method: NOTIFICATION.tasks, params: { _meta: meta, ...detailed } });
        };
        // The requestor hung up, the task expired, or the engine is closing: this task's part ends.
        engine.follow(taskId, caller, signal, step).then(ended, ended);
      }
    });
  };
}
