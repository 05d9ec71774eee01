import { z } from "zod";
import { TaskError } from "../../../core/errors.js";
import type { LooseParams } from "../../request-schemas.js";
import { META, TASKS_EXTENSION } from "./wire.js";

/** What a 2026-07-28 request says about its client, read from its `_meta` (X-CAP-8). */
export interface Envelope {
  protocolVersion: string;
  clientCapabilities: ClientCapabilities2026;
  /** X-CAP-2, X-CAP-5, X-CONF-9: declared on this request; earlier requests say nothing. */
  declaresTasks: boolean;
}

/** The client capabilities of one request, as far as this era reads them. */
export type ClientCapabilities2026 = z.infer<typeof capabilitiesSchema>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
// Not z.record: zod refuses an object with an own `constructor` key (see request-schemas.ts).
const objectSchema = z.custom<Record<string, unknown>>(isObject, "expected an object");
const extensionsSchema = z.custom<Record<string, Record<string, unknown>>>(
  (value) => isObject(value) && Object.values(value).every(isObject),
  "expected an object of extension settings objects",
);
const capabilitiesSchema = z.looseObject({
  elicitation: objectSchema.optional(),
  sampling: objectSchema.optional(),
  roots: objectSchema.optional(),
  extensions: extensionsSchema.optional(),
});
const clientInfoSchema = z.looseObject({ name: z.string(), version: z.string() });
const metaSchema = z.looseObject({
  [META.protocolVersion]: z.string().min(1),
  [META.clientCapabilities]: capabilitiesSchema,
  // X-CAP-8: SHOULD be sent, so optional; malformed when sent is still malformed.
  [META.clientInfo]: clientInfoSchema.optional(),
});

/**
 * The envelope of a request, or -32602 (HTTP 400) when `_meta` lacks a required field or holds a
 * malformed one (X-CAP-8). `tasks/*` requests are no exception.
 */
export function readEnvelope(params: LooseParams): Envelope {
  const parsed = metaSchema.safeParse(params?.["_meta"]);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "_meta"}: ${issue.message}`).join("; ");
    throw TaskError.invalidParams(`Invalid params: the request's _meta envelope is missing or malformed (${detail})`);
  }
  const clientCapabilities = parsed.data[META.clientCapabilities];
  return {
    protocolVersion: parsed.data[META.protocolVersion],
    clientCapabilities,
    // X-LEG-4: a legacy `tasks` capability alone does not declare the extension.
    declaresTasks: clientCapabilities.extensions !== undefined && Object.hasOwn(clientCapabilities.extensions, TASKS_EXTENSION),
  };
}

/** The protocol version a body declares in its envelope, without validating the rest. */
export function declaredVersionOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const params = (body as Record<string, unknown>)["params"];
  if (typeof params !== "object" || params === null) return undefined;
  const meta = (params as Record<string, unknown>)["_meta"];
  if (typeof meta !== "object" || meta === null) return undefined;
  const version = (meta as Record<string, unknown>)[META.protocolVersion];
  return typeof version === "string" ? version : undefined;
}
