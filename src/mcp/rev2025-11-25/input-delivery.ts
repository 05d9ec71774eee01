import type { Caller } from "../../core/caller.js";
import type { InputRequest, TaskOutcome, TaskRecord } from "../../core/task.js";
import { TaskError } from "../../core/errors.js";
import type { TaskEngine } from "../../runtime/task-engine.js";

/**
 * Puts one queued question to the requestor and resolves with its answer. Rejects when the
 * delivery itself failed (the stream closed): the question then stays queued for the next
 * `tasks/result`.
 */
export type InputDelivery = (input: InputRequest, task: TaskRecord) => Promise<TaskOutcome>;

/**
 * Questions out on some requestor stream of this process, per engine, by `taskId NUL inputId`:
 * two `tasks/result` requests waiting on one task (two tabs, a reconnect) must not both ask the
 * same question; the second leaves it to the first, and takes over if that delivery fails.
 */
const inFlight = new WeakMap<TaskEngine, Set<string>>();

/**
 * T-INPUT-3 (2025-11-25): a task's queued questions travel on the stream of a `tasks/result`
 * waiting on it. Delivers each pending one not already out, records the answer through the
 * engine (owner-checked, audited, wakes the handler) and forgets a failed delivery, so the next
 * wait delivers it again. Returns at once: answers arrive while the wait goes on. An answer the
 * engine refuses (it does not fit the question's form: -32602) goes to `refused`, and the
 * question stays queued.
 */
export async function deliverPendingInputs(
  engine: TaskEngine,
  task: TaskRecord,
  caller: Caller,
  deliver: InputDelivery,
  refused: (error: TaskError) => void = () => {},
): Promise<void> {
  let out = inFlight.get(engine);
  if (!out) inFlight.set(engine, (out = new Set()));
  const sent = out;
  for (const input of await engine.pendingInputs(task.id, caller)) {
    const key = `${task.id}\u0000${input.id}`;
    if (sent.has(key)) continue;
    sent.add(key);
    engine.inputDelivered(task, input, caller);
    deliver(input, task)
      .then(
        (answer) =>
          engine.respond(task.id, caller, input.id, answer).catch((error: unknown) => {
            if (!(error instanceof TaskError && error.kind === "invalid_params")) throw error;
            engine.logger.info(
              { taskId: task.id, inputId: input.id, reason: error.message },
              "answer refused: it does not fit the question",
            );
            refused(error);
          }),
        (error: unknown) => {
          // Delivery failed (stream gone): kept queued for the next tasks/result.
          engine.logger.debug({ taskId: task.id, inputId: input.id, err: String(error) }, "input delivery failed; will redeliver");
        },
      )
      .catch((error: unknown) =>
        engine.logger.warn({ taskId: task.id, inputId: input.id, err: String(error) }, "could not record an answer"),
      )
      .finally(() => sent.delete(key));
  }
}

/** Whether a pending question of the task is waiting for a delivery this process has not begun. */
export async function hasUndeliveredInputs(engine: TaskEngine, task: TaskRecord, caller: Caller): Promise<boolean> {
  const sent = inFlight.get(engine);
  const pending = await engine.pendingInputs(task.id, caller);
  return pending.some((input) => !sent?.has(`${task.id}\u0000${input.id}`));
}
