/**
 * An answer to a task's question (an `input_required` exchange) typed into the web view, checked
 * and turned into what the requestor's client would have sent: an `ElicitResult` for
 * `elicitation/create`, a `CreateMessageResult` for `sampling/createMessage`. An elicitation's
 * content is checked against the question's `requestedSchema` by the engine's `respond`, where
 * every path's answer is checked.
 */
import { z } from "zod";
import type { TaskOutcome } from "../core/task.js";
import { WebRequestError } from "./web-error.js";

const ELICIT = "elicitation/create";
const SAMPLE = "sampling/createMessage";

/** The methods the page can answer. */
export const ANSWERABLE_METHODS: readonly string[] = [ELICIT, SAMPLE];

/** The body of `POST /tasks/api/tasks/:id/inputs/:inputId`. */
const AnswerBody = z.strictObject({
  action: z.enum(["accept", "decline", "cancel"]),
  /** elicitation: the form's values. */
  content: z
    .record(z.string(), z.union([z.string().max(65_536), z.number(), z.boolean(), z.array(z.string().max(1024)).max(256)]))
    .optional(),
  /** sampling: the reply's text. */
  text: z.string().max(65_536).optional(),
});
export type AnswerBody = z.infer<typeof AnswerBody>;

/** The model name a sampling answer from the page carries. */
export const WEB_VIEW_MODEL = "mcp-tasks-web-view";

/** A sampling request refused by a person (the code MCP clients use for a rejected sampling request). */
const SAMPLING_REJECTED = -1;

/**
 * Checks the shape of `body` for the question's `method` and builds the answer to record (its
 * content is checked against the question's form when the engine records it).
 *
 * @throws WebRequestError 400 with a message naming what does not fit.
 */
export function answerOf(method: string, body: unknown): TaskOutcome {
  const parsed = AnswerBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    throw new WebRequestError(
      "invalid_params",
      `Invalid answer${where}: ${issue?.message ?? "malformed"}. Send {"action": "accept" | "decline" | "cancel", "content"?: {…}, "text"?: "…"}`,
    );
  }
  const answer = parsed.data;
  if (method === ELICIT) return elicitationAnswer(answer);
  if (method === SAMPLE) return samplingAnswer(answer);
  throw new WebRequestError(
    "invalid_params",
    `The web view cannot answer ${method.slice(0, 80)}: only ${ANSWERABLE_METHODS.join(" and ")}`,
  );
}

/** The form's content is checked by the engine's `respond`, as every path's answer is (the same words everywhere). */
function elicitationAnswer(answer: AnswerBody): TaskOutcome {
  if (answer.text !== undefined) throw new WebRequestError("invalid_params", 'Invalid answer: an elicitation takes "content", not "text"');
  return { kind: "result", value: { action: answer.action, ...(answer.content !== undefined && { content: answer.content }) } };
}

function samplingAnswer(answer: AnswerBody): TaskOutcome {
  if (answer.content !== undefined)
    throw new WebRequestError("invalid_params", 'Invalid answer: a sampling request takes "text", not "content"');
  if (answer.action !== "accept") {
    const message = answer.action === "decline" ? "Declined from the web view" : "Cancelled from the web view";
    return { kind: "error", error: { code: SAMPLING_REJECTED, message } };
  }
  if (answer.text === undefined || answer.text.trim() === "")
    throw new WebRequestError("invalid_params", 'Missing "text": the reply to the sampling request');
  return {
    kind: "result",
    value: { role: "assistant", content: { type: "text", text: answer.text }, model: WEB_VIEW_MODEL, stopReason: "endTurn" },
  };
}
