import type { LooseParams } from "../request-schemas.js";
import { headerMismatch, METHOD } from "../wire/rev2026-07-28/wire.js";

/** SEP-2243 header names, lower-case (X-HTTP-5: names compare case-insensitively). */
export const HEADER = { method: "mcp-method", name: "mcp-name", protocolVersion: "mcp-protocol-version" } as const;

/** X-HTTP-2, X-HTTP-1: the body field `Mcp-Name` mirrors, for the methods that require it. */
function nameFieldOf(method: string): string | undefined {
  switch (method) {
    case METHOD.toolsCall:
    case "prompts/get":
      return "name";
    case "resources/read":
      return "uri";
    case METHOD.tasksGet:
    case METHOD.tasksUpdate:
    case METHOD.tasksCancel:
      return "taskId";
    default:
      return undefined;
  }
}

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/** X-HTTP-5: a non-ASCII value travels Base64-sentinel-encoded; compared decoded, case-sensitively. */
function decodeHeaderValue(value: string): string {
  const match = SENTINEL.exec(value);
  return match ? Buffer.from(match[1] ?? "", "base64").toString("utf8") : value;
}

/** X-HTTP-2, X-HTTP-4, X-CONF-10: `Mcp-Method` is required and must name the body's method (-32020). */
export function checkMethodHeader(method: string, headers: Readonly<Record<string, string | undefined>>): void {
  const header = headers[HEADER.method];
  if (header === undefined) throw headerMismatch("the Mcp-Method header is required");
  if (header !== method) throw headerMismatch(`Mcp-Method header value '${header}' does not match body value '${method}'`);
}

/**
 * X-HTTP-1, X-HTTP-2, X-HTTP-4: `Mcp-Name` is required on the methods that name a target and must
 * equal it (-32020). A body whose field is not a string is left to the method's own -32602.
 */
export function checkNameHeader(method: string, params: LooseParams, headers: Readonly<Record<string, string | undefined>>): void {
  const field = nameFieldOf(method);
  if (field === undefined) return;
  const value = params?.[field];
  if (typeof value !== "string") return;
  const header = headers[HEADER.name];
  if (header === undefined) throw headerMismatch(`the Mcp-Name header is required on ${method}`);
  const decoded = decodeHeaderValue(header);
  if (decoded !== value) throw headerMismatch(`Mcp-Name header value '${header}' does not match body value '${value}'`);
}

/** X-HTTP-3: a sent MCP-Protocol-Version must equal the envelope's version (-32020). */
export function checkVersionHeader(declared: string, headers: Readonly<Record<string, string | undefined>>): void {
  const header = headers[HEADER.protocolVersion];
  if (header !== undefined && header !== declared)
    throw headerMismatch(`MCP-Protocol-Version header value '${header}' does not match body value '${declared}'`);
}
