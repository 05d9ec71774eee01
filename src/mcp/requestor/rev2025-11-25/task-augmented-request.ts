import { z } from "zod";
import { declaresTaskOperation, declaresTaskSupport, readCreatedTask } from "../../wire/rev2025-11-25/wire.js";
import { ConnectionError } from "../requestor-errors.js";
import { NO_TIMEOUT_MS, type TaskPeer } from "./peer.js";
import { RemoteTask, type LifecycleEvent } from "./remote-task.js";

export interface TaskAugmentedRequestOptions {
  /** Requested ttl of the receiver's task (T-NEW-1); the receiver may change it (T-TTL-3). */
  ttl?: number;
  /** Aborting gives up: the receiver's task is cancelled (best effort) and the call rejects. */
  signal?: AbortSignal;
  /** Called with the receiver's task id as soon as it exists. */
  onTaskCreated?: (taskId: string) => void;
  /** Re-attach to a task created earlier for the same request instead of creating another. */
  existingTaskId?: string;
  onLifecycle?: (event: LifecycleEvent) => void;
  defaultPollIntervalMs?: number;
}

/**
 * Sends `method` as a task where the receiver allows it and waits for the outcome; otherwise sends
 * it as a plain request. T-CAP-3: only a method the receiver lists under `tasks.requests` is
 * task-augmented. A receiver that answers a task-augmented request with the plain result (it
 * ignored the task metadata, T-NEW-4) is accepted as well. Resolves with the request's result;
 * rejects with the JSON-RPC error it ended with (RemoteError) or a TaskCancelledError.
 */
export async function requestMaybeAsTask<R>(
  peer: TaskPeer,
  method: string,
  params: Record<string, unknown>,
  resultSchema: z.ZodType<R>,
  options: TaskAugmentedRequestOptions = {},
): Promise<R> {
  const signal = options.signal;
  const base = { ...(signal !== undefined && { signal }), timeout: NO_TIMEOUT_MS };
  if (!declaresTaskSupport(peer.capabilities(), method)) {
    return peer.request(method, params, resultSchema, base);
  }
  let taskId = options.existingTaskId;
  let initial;
  if (taskId === undefined) {
    const task = { ...(options.ttl !== undefined && { ttl: options.ttl }) };
    const answer = await peer.request(method, { ...params, task }, z.unknown(), base);
    initial = readCreatedTask(answer);
    if (!initial) {
      // T-NEW-4 on the other side: processed normally, task metadata ignored.
      const plain = resultSchema.safeParse(answer);
      if (!plain.success) throw new ConnectionError(`The receiver answered ${method} with neither a CreateTaskResult nor a result`, -32603);
      return plain.data;
    }
    taskId = initial.taskId;
    options.onTaskCreated?.(taskId);
  }
  const remote = new RemoteTask(taskId, {
    peer,
    resultSchema,
    ...(initial && { initial }),
    ...(options.onLifecycle && { onLifecycle: options.onLifecycle }),
    ...(options.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: options.defaultPollIntervalMs }),
  });
  try {
    return await remote.result(signal !== undefined ? { signal } : {});
  } catch (error) {
    if (signal?.aborted && declaresTaskOperation(peer.capabilities(), "cancel")) {
      // We no longer want the answer: do not leave the receiver working for nobody.
      await remote.cancel().catch(() => {});
    }
    throw error;
  } finally {
    remote.dispose();
  }
}
