import type { IncomingMessage, ServerResponse } from "node:http";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { ScopeRequiredError, type BearerVerifier } from "../bearer-auth.js";
import { sendRpcError } from "../json-rpc-response.js";
import { STATELESS_ERAS } from "../../mcp/eras.js";
import { wireCodeIn } from "../../mcp/own-error-wire.js";
import { HttpFailure, type HttpRpcFailure } from "../rpc-http-errors.js";

/**
 * The refusal with the code of the era the request names in its MCP-Protocol-Version header (a
 * stateless era's requests always carry it, X-HTTP-3): authentication runs before the body is
 * read, so the header is what says which era's code the requestor reads.
 */
function inEraOf(req: IncomingMessage, failure: HttpRpcFailure): HttpRpcFailure {
  const header = req.headers["mcp-protocol-version"];
  const era = STATELESS_ERAS.find((e) => e.id === header);
  return era ? { ...failure, code: wireCodeIn(era.wire.ownErrorCodes, failure.code) } : failure;
}

/**
 * A `WWW-Authenticate: Bearer` challenge (RFC 6750 §3): quoted-string values escaped, and
 * `resource_metadata` (RFC 9728 §5.1) when the server publishes its protected-resource metadata.
 */
export function bearerChallenge(params: Record<string, string>, resourceMetadata?: string): string {
  const all = resourceMetadata === undefined ? params : { ...params, resource_metadata: resourceMetadata };
  const pairs = Object.entries(all).map(([key, value]) => `${key}="${value.replace(/["\\]/g, "\\$&")}"`);
  return pairs.length === 0 ? "Bearer" : `Bearer ${pairs.join(", ")}`;
}

/** The request's AuthInfo, undefined when no verifier is configured, or false once a 401/403 has been sent. */
export type Authenticate = (req: IncomingMessage, res: ServerResponse) => Promise<AuthInfo | undefined | false>;

/**
 * Authentication of the MCP endpoint: the verifier's verdict, or a 401/403 with its challenge.
 * `resourceMetadata` is read per request (its default depends on the port picked at listen time).
 * A {@link VerifierUnavailableError} propagates: the web view's routes verify the same tokens, so
 * the server's one error mapper answers it.
 */
export function bearerAuthentication(verifier: BearerVerifier | undefined, resourceMetadata?: () => string): Authenticate {
  const challenge = (params: Record<string, string>): string => bearerChallenge(params, resourceMetadata?.());
  return async (req, res) => {
    if (!verifier) return undefined;
    try {
      const auth = await verifier(req);
      if (auth) return auth;
      // RFC 6750 §3.1: a request that carries no credentials gets a bare challenge, no error code.
      const presented = req.headers.authorization !== undefined;
      sendRpcError(res, inEraOf(req, HttpFailure.unauthorized), "Unauthorized: a valid bearer token is required", {
        headers: {
          "www-authenticate": challenge(presented ? { error: "invalid_token", error_description: "a valid bearer token is required" } : {}),
        },
      });
    } catch (error) {
      // Order matters: the scope error is the more specific OAuth error. The descriptions come
      // from the verifier's own fixed wording, never from the token.
      if (error instanceof ScopeRequiredError) {
        sendRpcError(res, inEraOf(req, HttpFailure.forbidden), `Forbidden: ${error.message}`, {
          headers: {
            "www-authenticate": challenge({
              error: "insufficient_scope",
              scope: error.requiredScopes.join(" "),
              error_description: error.message,
            }),
          },
        });
      } else if (error instanceof InvalidTokenError) {
        sendRpcError(res, inEraOf(req, HttpFailure.unauthorized), `Unauthorized: ${error.message}`, {
          headers: { "www-authenticate": challenge({ error: "invalid_token", error_description: error.message }) },
        });
      } else throw error;
    }
    return false;
  };
}
