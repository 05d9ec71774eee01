import type { IncomingMessage, ServerResponse } from "node:http";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { sendRpcError } from "./json-rpc-response.js";
import { HttpFailure } from "./rpc-http-errors.js";

/**
 * Refuses (and answers) a request whose MCP-Protocol-Version this server does not speak. The SDK
 * transport checks it on its own path; requests answered without it must too (Streamable HTTP:
 * MUST answer 400). True when refused.
 */
export function refuseUnsupportedVersion(req: IncomingMessage, res: ServerResponse): boolean {
  const version = req.headers["mcp-protocol-version"];
  if (typeof version !== "string" || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  const supported = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
  sendRpcError(
    res,
    HttpFailure.unsupportedProtocolVersion,
    `Bad Request: Unsupported protocol version: ${version} (supported versions: ${supported})`,
  );
  return true;
}

/**
 * Shows the SDK transport the session's negotiated protocol version when the request names an
 * older one (it decides by the header whether a stream gets a priming event and event ids, and a
 * client that negotiated 2025-11-25 can resume whatever header it sends). A supported version is
 * all the header is checked for, before this (refuseUnsupportedVersion, or the transport).
 */
export function withSessionVersion(req: IncomingMessage, negotiated: string): void {
  const header = req.headers["mcp-protocol-version"];
  if (typeof header !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(header) || header >= negotiated) return;
  req.headers["mcp-protocol-version"] = negotiated;
  // The SDK's Node adapter builds its Request from the raw header list, not from `headers`.
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === "mcp-protocol-version") req.rawHeaders[i + 1] = negotiated;
  }
}
