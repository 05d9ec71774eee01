import { emitKeypressEvents } from "node:readline";
import { checkbox, confirm, input, number, select } from "@inquirer/prompts";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { deadlineSignal } from "../../core/deadline-signal.js";

/** Where a prompt renders and what withdraws it (inquirer's context). */
type Context = NonNullable<Parameters<typeof input>[1]>;

type Json = string | number | boolean | string[];
type Field = Record<string, unknown>;

/** The keys that answer without filling the form, shown on screen above the first field. */
export const ELICIT_KEYS_HINT = "Esc: decline · Ctrl-D: cancel";

/**
 * Turns a form elicitation into terminal prompts, straight to the fields: one prompt per field of
 * `requestedSchema`, typed by the field's schema (text with length/format checks, number with
 * bounds, yes/no, a choice from an enum, several choices from an enum array). The other two
 * actions of an ElicitResult are keys, shown on screen: Esc declines, Ctrl-D cancels. Ctrl-C
 * answers "cancel" too, as it always did. A withdrawal by the server (the context's signal)
 * still rejects.
 */
export async function promptElicitation(params: ElicitRequestFormParams, context: Context): Promise<ElicitResult> {
  const chosen = new AbortController();
  // Not AbortSignal.any(): on Node 20 its result can be collected while a prompt waits on it.
  const withdrawn = deadlineSignal({ signals: [context.signal, chosen.signal] });
  const signal = withdrawn.signal;
  const keys = process.stdin;
  // readline parses keys into "keypress" events; inquirer's prompts do the same on this stream.
  emitKeypressEvents(keys);
  const onKey = (_text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined): void => {
    if (key?.name === "escape") chosen.abort("decline");
    // Ctrl-D: read before readline's own handling, which would close an empty line's prompt.
    else if (key?.ctrl && key.name === "d") chosen.abort("cancel");
  };
  keys.prependListener("keypress", onKey);
  const fieldContext = { ...context, signal };
  try {
    context.output?.write(`${params.message}\n  (${ELICIT_KEYS_HINT})\n`);
    const schema = params.requestedSchema;
    const required = new Set(schema.required ?? []);
    const content: Record<string, Json> = {};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const value = await promptField(name, field as Field, required.has(name), fieldContext);
      if (value !== undefined) content[name] = value;
    }
    return { action: "accept", content };
  } catch (error) {
    if (chosen.signal.aborted && !context.signal?.aborted) return { action: chosen.signal.reason === "decline" ? "decline" : "cancel" };
    if (error instanceof Error && error.name === "ExitPromptError") return { action: "cancel" };
    throw error;
  } finally {
    keys.off("keypress", onKey);
    withdrawn.clear();
  }
}

async function promptField(name: string, field: Field, required: boolean, context: Context): Promise<Json | undefined> {
  const title = typeof field["title"] === "string" ? field["title"] : name;
  const description = typeof field["description"] === "string" ? ` (${field["description"]})` : "";
  const message = `${title}${description}${required ? "" : " [optional]"}`;
  const options = choicesOf(field);
  if (field["type"] === "array") {
    const items = (field["items"] ?? {}) as Field;
    // SEP-1034: the schema's default choices come ticked, as the other prompts come pre-filled.
    const ticked = new Set(Array.isArray(field["default"]) ? field["default"].map(String) : []);
    const choices = (choicesOf(items) ?? []).map((c) => ({ ...c, checked: ticked.has(c.value) }));
    const picked = await checkbox({ message, choices, required }, context);
    return picked.length === 0 && !required ? undefined : picked;
  }
  if (options) {
    const choices = required ? options : [{ name: "(no answer)", value: "" }, ...options];
    const picked = await select({ message, choices, ...(typeof field["default"] === "string" && { default: field["default"] }) }, context);
    return picked === "" ? undefined : picked;
  }
  if (field["type"] === "boolean") {
    return confirm({ message, ...(typeof field["default"] === "boolean" && { default: field["default"] }) }, context);
  }
  if (field["type"] === "number" || field["type"] === "integer") {
    const value = await number(
      {
        message,
        required,
        ...(typeof field["minimum"] === "number" && { min: field["minimum"] }),
        ...(typeof field["maximum"] === "number" && { max: field["maximum"] }),
        step: field["type"] === "integer" ? 1 : "any",
        ...(typeof field["default"] === "number" && { default: field["default"] }),
      },
      context,
    );
    return value;
  }
  const text = await input(
    {
      message,
      required,
      ...(typeof field["default"] === "string" && { default: field["default"] }),
      validate: (value: string) => checkString(value, field, required),
    },
    context,
  );
  return text === "" && !required ? undefined : text;
}

/** Choices of an enum field: `enum` (+ legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`. */
function choicesOf(field: Field): { name: string; value: string }[] | null {
  if (Array.isArray(field["enum"])) {
    const names = Array.isArray(field["enumNames"]) ? (field["enumNames"] as unknown[]) : [];
    return (field["enum"] as unknown[]).map((v, i) => ({ name: String(names[i] ?? v), value: String(v) }));
  }
  const titled = Array.isArray(field["oneOf"]) ? field["oneOf"] : Array.isArray(field["anyOf"]) ? field["anyOf"] : null;
  if (!titled) return null;
  return (titled as Field[]).map((o) => ({ name: String(o["title"] ?? o["const"]), value: String(o["const"]) }));
}

function checkString(value: string, field: Field, required: boolean): true | string {
  if (value === "" && !required) return true;
  const min = field["minLength"];
  const max = field["maxLength"];
  if (typeof min === "number" && value.length < min) return `at least ${min} characters`;
  if (typeof max === "number" && value.length > max) return `at most ${max} characters`;
  switch (field["format"]) {
    case "email":
      return /^[^@\s]+@[^@\s]+$/.test(value) || "an email address, please";
    case "uri":
      return URL.canParse(value) || "a URI, please";
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(value) || "a date as YYYY-MM-DD, please";
    case "date-time":
      return !Number.isNaN(Date.parse(value)) || "a date-time (ISO 8601), please";
    default:
      return true;
  }
}
