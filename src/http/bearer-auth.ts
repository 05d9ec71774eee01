import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { InsufficientScopeError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { TokenGrant } from "./token-file.js";

/**
 * Verifies a request's bearer token; returns the SDK's AuthInfo, or null for "no valid token"
 * (→ 401 invalid_token). May be async (a JWT verifier fetches keys). To say why a token is
 * refused, throw the SDK's `InvalidTokenError` (→ 401 with that description) or
 * {@link ScopeRequiredError} (→ 403 insufficient_scope); when it cannot decide right now, throw
 * {@link VerifierUnavailableError} (→ 503 with Retry-After). Any other exception is a server fault.
 */
export type BearerVerifier = (req: IncomingMessage) => AuthInfo | null | Promise<AuthInfo | null>;

/**
 * A valid token without a scope the resource requires: 403 `insufficient_scope` (RFC 6750 §3.1),
 * with the scopes the client must ask for, so it can step up instead of re-authenticating blindly.
 */
export class ScopeRequiredError extends InsufficientScopeError {
  constructor(readonly requiredScopes: readonly string[]) {
    super(`the token lacks a required scope (required: ${requiredScopes.join(" ")})`);
  }
}

/**
 * The verifier cannot judge the token right now, e.g. the issuer's key set cannot be fetched
 * (JWKS unreachable, timing out, answering an error or no key set). Not a verdict on the token:
 * answered 503 with `Retry-After`, never 401, which would make a client discard a good token and
 * authorize again. The message is for the operator's log; the client gets a fixed one.
 */
export class VerifierUnavailableError extends Error {
  override readonly name = "VerifierUnavailableError";

  constructor(
    message: string,
    /** How long the client should wait before retrying. */
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The scope that makes a principal an admin of the web view (every owner's tasks). Any verifier
 * can grant it through `AuthInfo.scopes`; the static one does for `"admin": true` token entries.
 */
export const ADMIN_SCOPE = "mcp-tasks:admin";

/** A verifier over a static token → principal (or grant) map (development). */
export function staticTokenVerifier(tokens: ReadonlyMap<string, string | TokenGrant>): BearerVerifier {
  // Compare digests in constant time so response timing does not leak token prefixes.
  const digests = [...tokens].map(([token, value]) => {
    const grant = typeof value === "string" ? { principal: value, admin: false } : value;
    return { digest: sha256(token), token, ...grant };
  });
  return (req) => {
    const header = req.headers.authorization;
    if (typeof header !== "string") return null;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) return null;
    const given = sha256(match[1]);
    let found: { token: string; principal: string; admin: boolean } | null = null;
    for (const entry of digests) if (timingSafeEqual(entry.digest, given)) found = entry;
    if (!found) return null;
    return {
      token: found.token,
      clientId: found.principal,
      scopes: found.admin ? [ADMIN_SCOPE] : [],
      extra: { principal: found.principal },
    };
  };
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
