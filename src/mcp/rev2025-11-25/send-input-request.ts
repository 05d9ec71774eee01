import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { withRelatedTask } from "../wire/rev2025-11-25/wire.js";
import { RemoteError } from "../requestor/requestor-errors.js";
import { peerOf } from "../requestor/rev2025-11-25/peer.js";
import { requestMaybeAsTask } from "../requestor/rev2025-11-25/task-augmented-request.js";

const AnyResult = z.record(z.string(), z.unknown());

/**
 * Client-side task ids of input requests sent as tasks, by `taskId NUL inputId`: a redelivery
 * (the tasks/result stream dropped while the client's task ran) re-attaches to the client's task
 * instead of asking the user a second time.
 */
const clientTaskOf = new Map<string, string>();

/**
 * Sends one queued input request of a task to its requestor (T-INPUT) with related-task `_meta`
 * (T-INPUT-2). A tool that asked with `{ asTask: true }` stored `task` in the params: the request
 * then goes task-augmented when the client declared support for it (T-CAP-3) and this waits for
 * the client's task to end (polling it, T-GET-2); otherwise it is sent as a plain request.
 */
export async function sendInputRequest(
  server: Server,
  input: { taskId: string; id: string; method: string; params: unknown },
  options: { relatedRequestId: RequestId; signal: AbortSignal; timeout: number },
): Promise<Record<string, unknown>> {
  const stored = (input.params ?? {}) as Record<string, unknown>;
  const { task, ...plain } = stored;
  const params = withRelatedTask(plain, input.taskId);
  if (task === undefined) {
    return server.request({ method: input.method, params } as never, AnyResult, options);
  }
  const key = `${input.taskId}\u0000${input.id}`;
  const ttl = (task as { ttl?: unknown } | null)?.ttl;
  const send = (existingTaskId: string | undefined) =>
    requestMaybeAsTask(peerOf(server, { relatedRequestId: options.relatedRequestId }), input.method, params, AnyResult, {
      signal: options.signal,
      ...(typeof ttl === "number" && { ttl }),
      ...(existingTaskId !== undefined && { existingTaskId }),
      onTaskCreated: (id) => clientTaskOf.set(key, id),
    });
  const existing = clientTaskOf.get(key);
  let value: Record<string, unknown>;
  try {
    value = await send(existing);
  } catch (error) {
    // The client that held the earlier task is gone (a new session, a restarted client): ask anew.
    if (existing === undefined || !(error instanceof RemoteError) || error.code !== -32602 || error.taskId !== null) throw error;
    clientTaskOf.delete(key);
    value = await send(undefined);
  }
  clientTaskOf.delete(key);
  return value;
}
