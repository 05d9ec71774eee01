import type { IncomingMessage } from "node:http";
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
export function viewerResolver(options: ViewerOptions): (req: IncomingMessage) => Viewer | null {
  const adminTokens = new SecretSet(options.adminTokens ?? []);
  return (req) => {
    if (adminTokens.has(bearerTokenOf(req))) return { principal: ADMIN_TOKEN_PRINCIPAL, admin: true, scope: { any: true } };
    const auth = options.verifier?.(req);
    if (!auth) return null;
    if (auth.scopes.includes(ADMIN_SCOPE)) return { principal: auth.clientId, admin: true, scope: { any: true } };
    return { principal: auth.clientId, admin: false, scope: { owner: ownerFromAuth(auth) } };
  };
}

/** Whether a task bound to `owner` is visible to the viewer. */
export function canSee(viewer: Viewer, owner: string | null): boolean {
  return "any" in viewer.scope || viewer.scope.owner === owner;
}
