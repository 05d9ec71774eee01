import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/** Verifies a request's bearer token; returns the SDK's AuthInfo or null. */
export type BearerVerifier = (req: IncomingMessage) => AuthInfo | null;

/** A verifier over a static token → principal map (development). */
export function staticTokenVerifier(tokens: ReadonlyMap<string, string>): BearerVerifier {
  // Compare digests in constant time so response timing does not leak token prefixes.
  const digests = [...tokens].map(([token, principal]) => ({ digest: sha256(token), token, principal }));
  return (req) => {
    const header = req.headers.authorization;
    if (typeof header !== "string") return null;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) return null;
    const given = sha256(match[1]);
    let found: { token: string; principal: string } | null = null;
    for (const entry of digests) if (timingSafeEqual(entry.digest, given)) found = entry;
    if (!found) return null;
    return { token: found.token, clientId: found.principal, scopes: [], extra: { principal: found.principal } };
  };
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
