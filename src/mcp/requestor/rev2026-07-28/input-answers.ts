import { CreateMessageRequestParamsSchema, ElicitRequestParamsSchema } from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../../../core/errors.js";
import { InputRefusedError } from "../requestor-errors.js";
import { ELICIT, SAMPLE } from "../../tool-context.js";
import type { InputHandlers } from "../requestor-era.js";

export type { InputHandlers };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** X-CAP-8: the client capabilities a request declares, from the handlers there are (X-MRTR-5: the server asks nothing else). */
export function capabilitiesOf(handlers: InputHandlers): Record<string, unknown> {
  return { ...(handlers.elicit && { elicitation: {} }), ...(handlers.sample && { sampling: {} }) };
}

/**
 * The answers to a set of InputRequests (`{key: {method, params}}`, X-MRTR-1, X-UPD-1), asked one
 * at a time in key order (a person at a terminal answers one prompt after another), skipping
 * `skip`'s keys. A request this client has no handler for is left unanswered (it was not
 * declared, so a conformant server does not send it). A handler that throws ends it all: there is
 * no way to answer an InputRequest with an error (X-UPD-4), so the caller learns it instead, as an
 * {@link InputRefusedError} (the signal's own abort is passed on as it is).
 */
export async function answerInputs(
  requests: Record<string, unknown>,
  handlers: InputHandlers,
  context: {
    relatedTaskId: string | null;
    signal: AbortSignal;
    skip?: ReadonlySet<string>;
    onAnswer?: (key: string, answer: unknown) => Promise<void>;
  },
): Promise<Record<string, unknown>> {
  const answers: Record<string, unknown> = {};
  for (const key of Object.keys(requests).sort()) {
    if (context.skip?.has(key)) continue;
    context.signal.throwIfAborted();
    const request = requests[key];
    if (!isObject(request)) continue;
    const info = { relatedTaskId: context.relatedTaskId, taskId: null, signal: context.signal };
    let asked: () => Promise<unknown>;
    if (request["method"] === ELICIT && handlers.elicit) {
      const params = ElicitRequestParamsSchema.safeParse(request["params"]);
      if (!params.success) throw TaskError.invalidParams(`The server's input request ${key} is not a valid ${ELICIT}`);
      const elicit = handlers.elicit;
      asked = () => elicit(params.data, info);
    } else if (request["method"] === SAMPLE && handlers.sample) {
      const params = CreateMessageRequestParamsSchema.safeParse(request["params"]);
      if (!params.success) throw TaskError.invalidParams(`The server's input request ${key} is not a valid ${SAMPLE}`);
      const sample = handlers.sample;
      asked = () => sample(params.data, info);
    } else {
      continue;
    }
    let answer: unknown;
    try {
      answer = await asked();
    } catch (error) {
      if (context.signal.aborted) throw error;
      throw InputRefusedError.of(error, context.relatedTaskId);
    }
    answers[key] = answer;
    await context.onAnswer?.(key, answer);
  }
  return answers;
}
