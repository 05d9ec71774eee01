import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { TokenGrant } from "./token-file.js";

/** Verifies a request's bearer token; returns the SDK's AuthInfo or null. */
export type BearerVerifier = (req: IncomingMessage) => AuthInfo | null;

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
