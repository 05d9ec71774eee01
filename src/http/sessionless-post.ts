import type { ServerResponse } from "node:http";
import { InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describeIssues } from "../mcp/schema-issues.js";
import { sendRpcError } from "./json-rpc-response.js";
import { HttpFailure } from "./rpc-http-errors.js";

/**
 * The answer to a POST with no session id that is not a valid `initialize`: an `initialize` whose
 * params fail its schema is told what is wrong (-32602, as the same message over stdio is), not to
 * initialize first; anything else is told to initialize first.
 */
export function refuseSessionlessPost(res: ServerResponse, body: unknown): void {
  const message = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  if (message["method"] === "initialize") {
    const id = typeof message["id"] === "string" || typeof message["id"] === "number" ? message["id"] : null;
    const parsed = InitializeRequestSchema.safeParse(body);
    sendRpcError(res, HttpFailure.invalidInitialize, `Invalid params for initialize: ${describeIssues(parsed.error)}`, { id });
    return;
  }
  sendRpcError(res, HttpFailure.noSession, "Bad Request: no valid session id; initialize first");
}
