import { CreateMessageResultSchema, ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../../core/errors.js";
import { checkedAnswer } from "../../core/form-answer.js";
import { CapabilityError } from "../capability-error.js";
import type { LooseParams } from "../request-schemas.js";
import { ELICIT, SAMPLE } from "../tool-context.js";
import type { GatherContext } from "../tool-definition.js";
import type { Envelope } from "../wire/rev2026-07-28/envelope.js";
import { RequestStateSeal, type RoundState } from "./request-state.js";

/** Thrown into code that asked something not answered yet: the round ends with an InputRequiredResult. */
class InputNeeded extends Error {
  constructor() {
    super("input needed from the requestor");
  }
}

/** X-MRTR-1: `resultType` of a result asking for input before the request can go on. */
const INPUT_REQUIRED = "input_required";

/**
 * The MRTR rounds of one 2026-07-28 tools/call (SEP-2322, X-MRTR): code that asks the requestor
 * runs again from the start on every round; its n-th question has the key `input-<n>`, answered
 * from the earlier rounds' answers (sealed in `requestState`) or this round's `inputResponses`.
 * A question without an answer ends the round: the result lists every question asked and still
 * open, with a new sealed state. Keys are per request, not per task (X-MRTR-3).
 */
export class InputRounds {
  private readonly answers: Record<string, unknown>;
  private readonly open = new Map<string, { method: string; params: unknown }>();
  private asked = 0;

  private constructor(
    private readonly seal: RequestStateSeal,
    private readonly binding: string,
    private readonly envelope: Envelope,
    answers: Record<string, unknown>,
    private readonly now: number,
  ) {
    this.answers = answers;
  }

  /** This round's answers: the sealed earlier ones, plus the responses to what the last round asked (others ignored). */
  static async of(secret: Buffer, binding: string, params: LooseParams, envelope: Envelope, now: number): Promise<InputRounds> {
    const seal = new RequestStateSeal(secret);
    const token = params?.["requestState"];
    if (token === undefined) return new InputRounds(seal, binding, envelope, {}, now);
    const state = seal.open(token, binding, now);
    const responses = params?.["inputResponses"];
    const given =
      typeof responses === "object" && responses !== null && !Array.isArray(responses) ? (responses as Record<string, unknown>) : {};
    const answers = { ...state.answers };
    for (const key of state.asked) if (Object.hasOwn(given, key)) answers[key] = given[key];
    return new InputRounds(seal, binding, envelope, answers, now);
  }

  /** An ask context for one run; every run starts numbering its questions again. */
  context(signal: AbortSignal): GatherContext {
    this.asked = 0;
    const caps = this.envelope.clientCapabilities;
    const can = { elicit: caps.elicitation !== undefined, sample: caps.sampling !== undefined };
    const ask = <T>(
      method: string,
      params: unknown,
      schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
    ): T => {
      const key = `input-${++this.asked}`;
      if (Object.hasOwn(this.answers, key)) {
        const parsed = schema.safeParse(this.answers[key]);
        if (!parsed.success) throw TaskError.invalidParams(`Invalid params: inputResponses.${key} is not a valid ${method} result`);
        // The same check of a form's answer as a task's question gets (the engine's respond).
        try {
          checkedAnswer({ params }, { kind: "result", value: parsed.data });
        } catch (error) {
          if (error instanceof TaskError) throw TaskError.invalidParams(`Invalid params: inputResponses.${key}: ${error.message}`);
          throw error;
        }
        return parsed.data;
      }
      this.open.set(key, { method, params });
      throw new InputNeeded();
    };
    return {
      signal,
      can,
      // X-MRTR-5: never a request type the client did not declare.
      elicit: async (params) => {
        if (!can.elicit) throw new CapabilityError("elicitation");
        return ask(ELICIT, params, ElicitResultSchema);
      },
      sample: async (params) => {
        if (!can.sample) throw new CapabilityError("sampling");
        return ask(SAMPLE, params, CreateMessageResultSchema);
      },
    };
  }

  /**
   * Runs `work` in this round: its value, or the InputRequiredResult when it asked something
   * still open (whatever it did with the InputNeeded thrown at it).
   */
  async run<T>(
    work: (ctx: GatherContext) => Promise<T>,
    signal: AbortSignal,
  ): Promise<{ value: T } | { inputRequired: Record<string, unknown> }> {
    this.open.clear();
    let value: T;
    try {
      value = await work(this.context(signal));
    } catch (error) {
      if (this.open.size === 0) throw error;
      return { inputRequired: this.inputRequired() };
    }
    return this.open.size === 0 ? { value } : { inputRequired: this.inputRequired() };
  }

  /** X-MRTR-5: `inputRequests` and a `requestState` the client echoes unchanged on its retry. */
  private inputRequired(): Record<string, unknown> {
    const state: RoundState = { binding: this.binding, asked: [...this.open.keys()], answers: this.answers, at: this.now };
    return { resultType: INPUT_REQUIRED, inputRequests: Object.fromEntries(this.open), requestState: this.seal.seal(state) };
  }
}
