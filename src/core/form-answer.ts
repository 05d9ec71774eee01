/**
 * The check of an answer to a form question (a question whose params carry a `requestedSchema`:
 * MCP's form elicitation, in either era), against that schema: a flat object of primitive
 * fields — string (length, format, enum), number and integer (range), boolean, and a list of
 * choices — with its `required` names. Every path that answers a task's question ends at the
 * engine's `respond`, which runs this, so the web view, both eras and the relays refuse the same
 * answers with the same words.
 */
import { TaskError } from "./errors.js";
import type { InputRequest, TaskOutcome } from "./task.js";

/** One field of a requested schema, as far as the check reads it. */
interface FieldSchema {
  type?: unknown;
  enum?: unknown;
  oneOf?: unknown;
  anyOf?: unknown;
  items?: unknown;
  format?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  minItems?: unknown;
  maxItems?: unknown;
}

interface FormSchema {
  properties: Record<string, FieldSchema>;
  required: string[];
}

const ACTIONS: readonly string[] = ["accept", "decline", "cancel"];

/** The question's form, or null when it asks for none (a URL-mode elicitation, a sampling request, …). */
export function formOf(params: unknown): FormSchema | null {
  if (typeof params !== "object" || params === null) return null;
  const schema = (params as { requestedSchema?: unknown }).requestedSchema;
  if (typeof schema !== "object" || schema === null) return null;
  const { properties, required } = schema as { properties?: unknown; required?: unknown };
  return {
    properties: typeof properties === "object" && properties !== null ? (properties as Record<string, FieldSchema>) : {},
    required: Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [],
  };
}

/**
 * Checks `value`, the requestor's result for a question with `form`, and returns it as it is
 * recorded: an `accept` with its content checked field by field; a `decline` or `cancel` without
 * content (an empty one is dropped, any other refused).
 *
 * @throws TaskError invalid_params (-32602) whose message names the field that does not fit.
 */
export function checkFormAnswer(form: FormSchema, value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw refuse('Invalid answer: expected an object {"action": …, "content"?: {…}}');
  const answer = value as Record<string, unknown>;
  const action = answer["action"];
  if (typeof action !== "string" || !ACTIONS.includes(action))
    throw refuse(`Invalid answer at action: expected one of ${ACTIONS.map((a) => `"${a}"`).join(", ")}`);
  const content = answer["content"];
  if (action !== "accept") {
    if (content !== undefined && !(isPlainObject(content) && Object.keys(content).length === 0))
      throw refuse(`Invalid answer: "${action}" carries no content`);
    const { content: _dropped, ...rest } = answer;
    return rest;
  }
  if (content !== undefined && !isPlainObject(content)) throw refuse("Invalid answer at content: expected an object of the form's fields");
  const fields = (content ?? {}) as Record<string, unknown>;
  // A field the form does not declare is kept, not refused: requestedSchema is a JSON Schema, whose
  // objects allow further properties unless they say otherwise, and requestors (the official
  // conformance suite's among them) send such answers.
  for (const [name, field] of Object.entries(fields)) {
    const schema = Object.hasOwn(form.properties, name) ? form.properties[name] : undefined;
    if (schema !== undefined) checkField(name, schema, field);
  }
  for (const name of form.required) {
    if (!Object.hasOwn(fields, name)) throw refuse(`Missing required field "${name.slice(0, 80)}"`);
  }
  return answer;
}

function refuse(message: string): TaskError {
  return TaskError.invalidParams(message);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The allowed values of an enum field (`enum`, or titled `oneOf`/`anyOf` consts), or null for a free field. */
function choicesOf(field: FieldSchema): unknown[] | null {
  if (Array.isArray(field.enum)) return field.enum;
  const options = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : null;
  if (options)
    return options.map((option) => (typeof option === "object" && option !== null ? (option as { const?: unknown }).const : undefined));
  return null;
}

/** The string formats a form field may ask for, and how a value of each is told. */
const FORMATS: Readonly<Record<string, { test: (text: string) => boolean; what: string }>> = {
  email: { test: (text) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text), what: "an email address" },
  uri: { test: (text) => URL.canParse(text), what: "a URI" },
  date: { test: (text) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)), what: "a date (YYYY-MM-DD)" },
  "date-time": {
    test: (text) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) && !Number.isNaN(Date.parse(text)),
    what: "a date and time (RFC 3339)",
  },
};

function checkField(name: string, field: FieldSchema, value: unknown): void {
  const field_ = `"${name.slice(0, 80)}"`;
  const wrong = (expected: string): never => {
    throw refuse(`Invalid field ${field_}: expected ${expected}`);
  };
  switch (field.type) {
    case "string": {
      if (typeof value !== "string") return wrong("a string");
      const choices = choicesOf(field);
      if (choices && !choices.includes(value)) wrong(`one of ${choices.map((c) => JSON.stringify(c)).join(", ")}`);
      if (typeof field.minLength === "number" && value.length < field.minLength) wrong(`at least ${field.minLength} characters`);
      if (typeof field.maxLength === "number" && value.length > field.maxLength) wrong(`at most ${field.maxLength} characters`);
      const format = typeof field.format === "string" ? FORMATS[field.format] : undefined;
      if (format && !format.test(value)) wrong(format.what);
      return;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return wrong("a number");
      if (field.type === "integer" && !Number.isInteger(value)) wrong("a whole number");
      if (typeof field.minimum === "number" && value < field.minimum) wrong(`a number ≥ ${field.minimum}`);
      if (typeof field.maximum === "number" && value > field.maximum) wrong(`a number ≤ ${field.maximum}`);
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") wrong("true or false");
      return;
    case "array": {
      const items = isPlainObject(field.items) ? choicesOf(field.items as FieldSchema) : null;
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return wrong("a list of strings");
      if (items && !value.every((v) => items.includes(v))) wrong(`values among ${items.map((c) => JSON.stringify(c)).join(", ")}`);
      if (typeof field.minItems === "number" && value.length < field.minItems) wrong(`at least ${field.minItems} values`);
      if (typeof field.maxItems === "number" && value.length > field.maxItems) wrong(`at most ${field.maxItems} values`);
      return;
    }
    default:
      wrong("a field of a form (string, number, integer, boolean, enum or list of choices)");
  }
}

/**
 * The answer to one of a task's questions as it is recorded: checked against the question's form
 * when it has one and the requestor answered with a result (an error answer carries no content).
 *
 * @throws TaskError invalid_params (-32602) naming the field, as {@link checkFormAnswer}.
 */
export function checkedAnswer(question: Pick<InputRequest, "params">, answer: TaskOutcome): TaskOutcome {
  const form = formOf(question.params);
  if (form === null || answer.kind !== "result") return answer;
  return { kind: "result", value: checkFormAnswer(form, answer.value) };
}
