/**
 * An answer to a task's question (an `input_required` exchange) typed into the web view, checked
 * and turned into what the requestor's client would have sent: an `ElicitResult` for
 * `elicitation/create` (its content checked against the question's `requestedSchema`), a
 * `CreateMessageResult` for `sampling/createMessage`.
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
  content: z.record(z.string(), z.union([z.string().max(65_536), z.number(), z.boolean(), z.array(z.string().max(1024)).max(256)])).optional(),
  /** sampling: the reply's text. */
  text: z.string().max(65_536).optional(),
});
export type AnswerBody = z.infer<typeof AnswerBody>;

/** The model name a sampling answer from the page carries. */
export const WEB_VIEW_MODEL = "mcp-tasks-web-view";

/** A sampling request refused by a person (the code MCP clients use for a rejected sampling request). */
const SAMPLING_REJECTED = -1;

/**
 * Checks `body` against the question (`method`, `params`) and builds the answer to record.
 *
 * @throws WebRequestError 400 with a message naming the field for anything that does not fit.
 */
export function answerOf(method: string, params: unknown, body: unknown): TaskOutcome {
  const parsed = AnswerBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    throw new WebRequestError("invalid_params", `Invalid answer${where}: ${issue?.message ?? "malformed"}. Send {"action": "accept" | "decline" | "cancel", "content"?: {…}, "text"?: "…"}`);
  }
  const answer = parsed.data;
  if (method === ELICIT) return elicitationAnswer(params, answer);
  if (method === SAMPLE) return samplingAnswer(answer);
  throw new WebRequestError("invalid_params", `The web view cannot answer ${method.slice(0, 80)}: only ${ANSWERABLE_METHODS.join(" and ")}`);
}

function elicitationAnswer(params: unknown, answer: AnswerBody): TaskOutcome {
  if (answer.text !== undefined) throw new WebRequestError("invalid_params", 'Invalid answer: an elicitation takes "content", not "text"');
  if (answer.action !== "accept") {
    if (answer.content !== undefined) throw new WebRequestError("invalid_params", `Invalid answer: "${answer.action}" carries no content`);
    return { kind: "result", value: { action: answer.action } };
  }
  const schema = requestedSchemaOf(params);
  // A URL-mode elicitation (no schema) is accepted without content.
  if (schema === null) return { kind: "result", value: { action: "accept" } };
  const content = answer.content ?? {};
  for (const [name, value] of Object.entries(content)) {
    const field = schema.properties[name];
    if (field === undefined) throw new WebRequestError("invalid_params", `Unknown field "${name.slice(0, 80)}": the question asks for ${Object.keys(schema.properties).join(", ") || "nothing"}`);
    checkField(name, field, value);
  }
  for (const name of schema.required) {
    if (!(name in content)) throw new WebRequestError("invalid_params", `Missing required field "${name}"`);
  }
  return { kind: "result", value: { action: "accept", content } };
}

function samplingAnswer(answer: AnswerBody): TaskOutcome {
  if (answer.content !== undefined) throw new WebRequestError("invalid_params", 'Invalid answer: a sampling request takes "text", not "content"');
  if (answer.action !== "accept") {
    const message = answer.action === "decline" ? "Declined from the web view" : "Cancelled from the web view";
    return { kind: "error", error: { code: SAMPLING_REJECTED, message } };
  }
  if (answer.text === undefined || answer.text.trim() === "") throw new WebRequestError("invalid_params", 'Missing "text": the reply to the sampling request');
  return { kind: "result", value: { role: "assistant", content: { type: "text", text: answer.text }, model: WEB_VIEW_MODEL, stopReason: "endTurn" } };
}

/** One field of a requested schema, as far as the page builds forms for it (MCP's primitive schema definitions). */
interface FieldSchema {
  type?: unknown;
  enum?: unknown;
  oneOf?: unknown;
  items?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  minimum?: unknown;
  maximum?: unknown;
}

interface RequestedSchema {
  properties: Record<string, FieldSchema>;
  required: string[];
}

function requestedSchemaOf(params: unknown): RequestedSchema | null {
  if (typeof params !== "object" || params === null) return null;
  const schema = (params as { requestedSchema?: unknown }).requestedSchema;
  if (typeof schema !== "object" || schema === null) return null;
  const { properties, required } = schema as { properties?: unknown; required?: unknown };
  return {
    properties: typeof properties === "object" && properties !== null ? (properties as Record<string, FieldSchema>) : {},
    required: Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [],
  };
}

/** The allowed values of an enum field (`enum`, or titled `oneOf` consts), or null for a free field. */
function choicesOf(field: FieldSchema): unknown[] | null {
  if (Array.isArray(field.enum)) return field.enum;
  if (Array.isArray(field.oneOf)) return field.oneOf.map((option) => (typeof option === "object" && option !== null ? (option as { const?: unknown }).const : undefined));
  return null;
}

function checkField(name: string, field: FieldSchema, value: unknown): void {
  const wrong = (expected: string): never => {
    throw new WebRequestError("invalid_params", `Invalid field "${name}": expected ${expected}`);
  };
  switch (field.type) {
    case "string": {
      if (typeof value !== "string") wrong("a string");
      const text = value as string;
      const choices = choicesOf(field);
      if (choices && !choices.includes(text)) wrong(`one of ${choices.map((c) => JSON.stringify(c)).join(", ")}`);
      if (typeof field.minLength === "number" && text.length < field.minLength) wrong(`at least ${field.minLength} characters`);
      if (typeof field.maxLength === "number" && text.length > field.maxLength) wrong(`at most ${field.maxLength} characters`);
      return;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) wrong("a number");
      const n = value as number;
      if (field.type === "integer" && !Number.isInteger(n)) wrong("a whole number");
      if (typeof field.minimum === "number" && n < field.minimum) wrong(`a number ≥ ${field.minimum}`);
      if (typeof field.maximum === "number" && n > field.maximum) wrong(`a number ≤ ${field.maximum}`);
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") wrong("true or false");
      return;
    case "array": {
      const items = typeof field.items === "object" && field.items !== null ? choicesOf(field.items as FieldSchema) : null;
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) wrong("a list of strings");
      if (items && !(value as string[]).every((v) => items.includes(v))) wrong(`values among ${items.map((c) => JSON.stringify(c)).join(", ")}`);
      return;
    }
    default:
      wrong("a field the web view can fill in (string, number, integer, boolean or enum)");
  }
}
