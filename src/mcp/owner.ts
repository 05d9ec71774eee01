import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/**
 * The owner key a task is bound to (T-SEC-1): issuer + subject when the verifier supplied them
 * (so a refreshed token keeps its tasks), else the client id; null without an authorization
 * context (T-SEC-2: tasks then reachable by id only, ids unguessable).
 */
export function ownerFromAuth(auth: AuthInfo | undefined): string | null {
  if (!auth) return null;
  const extra = auth.extra ?? {};
  const subject = typeof extra["sub"] === "string" ? extra["sub"] : typeof extra["principal"] === "string" ? extra["principal"] : null;
  const issuer = typeof extra["iss"] === "string" ? extra["iss"] : "local";
  return `${issuer}|${subject ?? auth.clientId}`;
}
