import type * as Inquirer from "@inquirer/prompts";
import { emitKeypressEvents } from "node:readline";
import { prompts } from "./prompts.js";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { deadlineSignal } from "../../core/deadline-signal.js";
import { fieldProblem } from "./answer-check.js";
import { askYesNo } from "./yes-no-prompt.js";

/** Where a prompt renders and what withdraws it (inquirer's context). */
type Context = NonNullable<Parameters<typeof Inquirer.input>[1]>;

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
  // Every prompt starts from what the schema gives (its `default`) and from nothing else: a field
  // without one is answered only by what the person types or picks. Left blank, an optional
  // field is left out of the answer and a required one is asked again.
  const options = choicesOf(field);
  if (field["type"] === "array") {
    const items = (field["items"] ?? {}) as Field;
    // SEP-1034: the schema's default choices come ticked, as the other prompts come pre-filled.
    const ticked = new Set(Array.isArray(field["default"]) ? field["default"].map(String) : []);
    const choices = (choicesOf(items) ?? []).map((c) => ({ ...c, checked: ticked.has(c.value) }));
    const validate = (picked: readonly { value: string }[]): true | string => {
      if (picked.length === 0 && !required) return true;
      return (
        fieldProblem(
          field,
          picked.map((c) => c.value),
        ) ?? true
      );
    };
    const picked = await prompts().checkbox({ message, choices, required, validate }, context);
    return picked.length === 0 && !required ? undefined : picked;
  }
  if (options) return pickOne(message, options, field, required, context);
  if (field["type"] === "boolean") {
    if (typeof field["default"] === "boolean") return prompts().confirm({ message, default: field["default"] }, context);
    return askYesNo(message, required, context);
  }
  if (field["type"] === "number" || field["type"] === "integer") {
    const value = await prompts().number(
      {
        message,
        required,
        ...(typeof field["minimum"] === "number" && { min: field["minimum"] }),
        ...(typeof field["maximum"] === "number" && { max: field["maximum"] }),
        step: field["type"] === "integer" ? 1 : "any",
        ...(typeof field["default"] === "number" && { default: field["default"] }),
        validate: (value: number | undefined) => (value === undefined ? true : (fieldProblem(field, value) ?? true)),
      },
      context,
    );
    return value;
  }
  const text = await prompts().input(
    {
      message,
      required,
      ...(typeof field["default"] === "string" && { default: field["default"] }),
      validate: (value: string) => {
        if ((value === "" && !required) || field["type"] !== "string") return true;
        return fieldProblem(field, value) ?? true;
      },
    },
    context,
  );
  return text === "" && !required ? undefined : text;
}

/** The first line of a choice without a default: no answer (optional), or a reminder to choose (required). */
const NOTHING = Symbol("nothing chosen");

/**
 * One choice from an enum. The cursor starts on the schema's default, else on a first line that is
 * no answer: "(no answer)" for an optional field (Enter leaves it out), "(choose one)" for a
 * required one (Enter asks again).
 */
async function pickOne(message: string, options: Choice[], field: Field, required: boolean, context: Context): Promise<string | undefined> {
  const preset = typeof field["default"] === "string" && options.some((c) => c.value === field["default"]) ? field["default"] : undefined;
  const first: Array<{ name: string; value: string | typeof NOTHING }> = !required
    ? [{ name: "(no answer)", value: NOTHING }]
    : preset === undefined
      ? [{ name: "(choose one)", value: NOTHING }]
      : [];
  for (;;) {
    const picked = await prompts().select<string | typeof NOTHING>(
      { message, choices: [...first, ...options], ...(preset !== undefined && { default: preset }) },
      context,
    );
    if (picked !== NOTHING) return picked;
    if (!required) return undefined;
    context.output?.write("  an answer is required: choose one\n");
  }
}

type Choice = { name: string; value: string };

/** Choices of an enum field: `enum` (+ legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`. */
function choicesOf(field: Field): Choice[] | null {
  if (Array.isArray(field["enum"])) {
    const names = Array.isArray(field["enumNames"]) ? (field["enumNames"] as unknown[]) : [];
    return (field["enum"] as unknown[]).map((v, i) => ({ name: String(names[i] ?? v), value: String(v) }));
  }
  const titled = Array.isArray(field["oneOf"]) ? field["oneOf"] : Array.isArray(field["anyOf"]) ? field["anyOf"] : null;
  if (!titled) return null;
  return (titled as Field[]).map((o) => ({ name: String(o["title"] ?? o["const"]), value: String(o["const"]) }));
}
