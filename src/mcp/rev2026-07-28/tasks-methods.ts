import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../../core/errors.js";
import { checkedAnswer } from "../../core/form-answer.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskOutcome } from "../../core/task.js";
import type { StatelessHost, StatelessHttpRequest } from "../era.js";
import type { LooseParams } from "../request-schemas.js";
import { ELICIT, SAMPLE } from "../tool-context.js";
import { detailedTask } from "../wire/rev2026-07-28/task-wire.js";
import { RESULT_TYPE } from "../wire/rev2026-07-28/wire.js";

/** X-UPD-4: what answers each kind of input request (MRTR InputResponses). */
const RESULT_SCHEMAS: Readonly<Record<string, { safeParse(value: unknown): { success: boolean } }>> = {
  [ELICIT]: ElicitResultSchema,
  [SAMPLE]: CreateMessageResultSchema,
  "roots/list": ListRootsResultSchema,
};

/** X-UPD-5, X-CANCEL-2, X-CONF-7: the ack is an empty result, typed "complete", nothing else. */
const ACK = { resultType: RESULT_TYPE.complete } as const;

/**
 * `tasks/get` (X-GET): a pure read (X-GET-10). Unknown, foreign, malformed or expired ids are
 * -32602 (X-ERR-2), and a foreign id is "not found" like an unknown one (X-SEC-2, T-SEC-3).
 */
export async function tasksGet(
  { engine }: StatelessHost,
  params: LooseParams,
  request: StatelessHttpRequest,
): Promise<Record<string, unknown>> {
  const task = await engine.get(params?.["taskId"], request.caller);
  const pending = task.status === "input_required" ? await engine.pendingInputs(task.id, request.caller) : [];
  // A finished task's DetailedTask carries its result: this read is the result's delivery.
  engine.delivered(task);
  return detailedTask(task, pending);
}

/**
 * `tasks/update` (X-UPD): each response goes to the engine, which records it before the ack, so
 * the next `tasks/get` no longer lists the key (X-CONF-2). A key not outstanding now — never
 * issued, already answered, superseded — is ignored (X-UPD-8), and a subset of the keys is fine
 * (X-UPD-9). A terminal task takes nothing and is acked the same (the update changes nothing).
 */
export async function tasksUpdate(
  { engine }: StatelessHost,
  params: LooseParams,
  request: StatelessHttpRequest,
): Promise<Record<string, unknown>> {
  const responses = params?.["inputResponses"];
  if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
    throw TaskError.invalidParams("Invalid params: inputResponses must be an object");
  }
  // X-UPD-7: an unknown task is an error, before any key is looked at.
  const task = await engine.get(params?.["taskId"], request.caller);
  if (isTerminal(task.status)) return { ...ACK };
  const outstanding = new Map((await engine.pendingInputs(task.id, request.caller)).map((input) => [input.id, input]));
  const answers: Array<[key: string, answer: TaskOutcome]> = [];
  for (const [key, value] of Object.entries(responses as Record<string, unknown>)) {
    const input = outstanding.get(key);
    if (input === undefined) continue;
    // X-UPD-4: checked before anything is written, so a malformed answer changes nothing — the
    // form's fields too (the engine's respond checks them again, as on every path).
    const schema = RESULT_SCHEMAS[input.method];
    if (schema && !schema.safeParse(value).success)
      throw TaskError.invalidParams(`Invalid params: inputResponses.${key} is not a valid ${input.method} result`);
    try {
      answers.push([key, checkedAnswer(input, { kind: "result", value })]);
    } catch (error) {
      if (error instanceof TaskError) throw TaskError.invalidParams(`Invalid params: inputResponses.${key}: ${error.message}`);
      throw error;
    }
  }
  // The engine's first-answer-wins write: one that lost a race is ignored like an answered key.
  for (const [key, answer] of answers) await engine.respond(task.id, request.caller, key, answer);
  return { ...ACK };
}

/**
 * `tasks/cancel` (X-CANCEL): the ack, also for a task already terminal (X-CONF-1; the 2025-11-25
 * -32602 is gone, X-CANCEL-6), and for a cancel that lost the race with the task's end (X-CANCEL-4).
 */
export async function tasksCancel(
  { engine }: StatelessHost,
  params: LooseParams,
  request: StatelessHttpRequest,
): Promise<Record<string, unknown>> {
  try {
    await engine.cancel(params?.["taskId"], request.caller);
  } catch (error) {
    if (!(error instanceof TaskError && error.kind === "terminal")) throw error;
  }
  return { ...ACK };
}
