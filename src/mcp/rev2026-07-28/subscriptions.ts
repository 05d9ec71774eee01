import { TaskError } from "../../core/errors.js";
import { isTerminal } from "../../core/task-status.js";
import type { StatelessHost, StatelessHttpRequest } from "../era.js";
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
): Promise<AsyncIterable<Record<string, unknown>>> {
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
  return stream(host, request, subscriptionId, accepted);
}

async function* stream(
  host: StatelessHost,
  request: StatelessHttpRequest,
  subscriptionId: string | number,
  taskIds: string[],
): AsyncGenerator<Record<string, unknown>> {
  const meta = { [META_SUBSCRIPTION_ID]: subscriptionId };
  yield {
    jsonrpc: "2.0",
    method: NOTIFICATION.subscriptionsAcknowledged,
    params: { _meta: meta, notifications: taskIds.length > 0 ? { taskIds } : {} },
  };
  const queue: Record<string, unknown>[] = [];
  let wake: () => void = () => {};
  let running = taskIds.length;
  const follow = async (taskId: string): Promise<void> => {
    let last = "";
    try {
      for await (const { task } of host.engine.watch(taskId, request.caller, request.signal)) {
        const pending = task.status === "input_required" ? await host.engine.pendingInputs(task.id, request.caller) : [];
        const { resultType: _resultType, ...detailed } = detailedTask(task, pending);
        const shown = JSON.stringify(detailed);
        if (shown === last) continue;
        last = shown;
        queue.push({ jsonrpc: "2.0", method: NOTIFICATION.tasks, params: { _meta: meta, ...detailed } });
        wake();
        if (isTerminal(task.status)) return;
      }
    } catch {
      // The requestor hung up, the task expired, or the engine is closing: this task's part ends.
    } finally {
      running--;
      wake();
    }
  };
  for (const taskId of taskIds) void follow(taskId);
  const onAbort = (): void => wake();
  request.signal.addEventListener("abort", onAbort);
  try {
    while (!request.signal.aborted) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (running === 0) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    request.signal.removeEventListener("abort", onAbort);
  }
  // The subscription ends gracefully: its result closes the stream (SubscriptionsListenResult).
  if (!request.signal.aborted) yield { jsonrpc: "2.0", id: subscriptionId, result: { resultType: RESULT_TYPE.complete, _meta: meta } };
}
