import type { IncomingMessage } from "node:http";
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { ADMIN_SCOPE, type BearerVerifier } from "../http/bearer-auth.js";
import { bearerTokenOf, SecretSet } from "../http/bearer-token.js";
import { ownerFromAuth } from "../mcp/owner.js";
import type { OwnerScope } from "../store/task-store.js";

/** Who is looking at the web view, and which tasks they may see and cancel. */
export interface Viewer {
  /** A name to show (never a token). */
  principal: string;
  admin: boolean;
  /** Admins: every task; anyone else: exactly the tasks bound to their owner key (T-SEC-3). */
  scope: OwnerScope;
}

/** How the web view recognizes its viewers. */
export interface ViewerOptions {
  /** Bearer tokens that open the view as an admin. */
  adminTokens?: readonly string[];
  /**
   * The MCP endpoint's verifier. A principal it accepts sees its own tasks (the owner key of
   * `ownerFromAuth`, the same one `tools/call` binds tasks to); one with the `mcp-tasks:admin`
   * scope sees every task.
   */
  verifier?: BearerVerifier;
}

/** The principal shown for the `--admin-token` credential. */
export const ADMIN_TOKEN_PRINCIPAL = "admin";

/** Builds the function that turns a request's `Authorization: Bearer …` into a {@link Viewer}, or null (→ 401). */
export function viewerResolver(options: ViewerOptions): (req: IncomingMessage) => Promise<Viewer | null> {
  const adminTokens = new SecretSet(options.adminTokens ?? []);
  return async (req) => {
    if (adminTokens.has(bearerTokenOf(req))) return { principal: ADMIN_TOKEN_PRINCIPAL, admin: true, scope: { any: true } };
    const auth = await verified(options.verifier, req);
    if (!auth) return null;
    if (auth.scopes.includes(ADMIN_SCOPE)) return { principal: auth.clientId, admin: true, scope: { any: true } };
    return { principal: auth.clientId, admin: false, scope: { owner: ownerFromAuth(auth) } };
  };
}

/**
 * The verifier's answer, with a refused token (the verifier's typed OAuth errors) as null: the
 * web view answers every refusal with its own 401. Server faults (e.g. JWKS unreachable) propagate.
 */
async function verified(verifier: BearerVerifier | undefined, req: IncomingMessage): Promise<AuthInfo | null> {
  if (!verifier) return null;
  try {
    return await verifier(req);
  } catch (error) {
    if (error instanceof OAuthError) return null;
    throw error;
  }
}

/** Whether a task bound to `owner` is visible to the viewer. */
export function canSee(viewer: Viewer, owner: string | null): boolean {
  return "any" in viewer.scope || viewer.scope.owner === owner;
}
