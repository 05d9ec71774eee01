import type { ElicitRequestParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ElicitHandler } from "./receiver-options.js";

type Value = NonNullable<ElicitResult["content"]>[string];

/** A schema default this client can send back as a form value: a string, a number, a boolean or a string list. */
function formValue(value: unknown): Value | undefined {
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return [...value];
  return undefined;
}

/**
 * SEP-1034 (defaults in elicitation schemas, 2025-11-25): a field of the requested form that the
 * accepted answer leaves out takes the `default` its schema gives, so the server gets what the
 * person was offered and did not change — whether a prompt pre-filled it or a script answered
 * only the fields it cares about (`--answer '{"name":"Ann"}'`). Fields given are kept as given;
 * a decline or a cancel carries no content and stays as it is; URL-mode requests have no form.
 */
export function withSchemaDefaults(params: ElicitRequestParams, result: ElicitResult): ElicitResult {
  if (result.action !== "accept" || params.mode === "url") return result;
  const properties = params.requestedSchema.properties ?? {};
  const content: Record<string, Value> = { ...result.content };
  let filled = false;
  for (const [name, field] of Object.entries(properties)) {
    if (content[name] !== undefined || typeof field !== "object" || field === null || !("default" in field)) continue;
    const value = formValue(field.default);
    if (value === undefined) continue;
    content[name] = value;
    filled = true;
  }
  return filled ? { ...result, content } : result;
}

/** `handler`, its accepted answers completed with the schema's defaults ({@link withSchemaDefaults}). */
export function applyingSchemaDefaults(handler: ElicitHandler): ElicitHandler {
  return async (params, info) => withSchemaDefaults(params, await handler(params, info));
}
