import { createHash } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Caller } from "../core/caller.js";

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

/**
 * What tasks are bound to without an authorization context: "owner" binds them to nobody (any
 * session reaches a task by its id, so a client that reconnects finds its tasks); "session" binds
 * them to the MCP session that created them (another session gets "not found"; no reconnecting).
 */
export type TaskBinding = "owner" | "session";

/**
 * The owner key of session binding: a digest of the session id, never the id itself — without
 * authentication the session id is what lets a client act in its session, and owner keys are
 * stored and logged.
 */
export function sessionOwner(sessionId: string): string {
  return `session:${createHash("sha256").update(sessionId).digest("base64url").slice(0, 22)}`;
}

/**
 * The caller of a request. An authorization context always decides the owner (T-SEC-1); session
 * binding applies only without one.
 */
export function callerOf(
  auth: AuthInfo | undefined,
  binding: TaskBinding,
  sessionId: string | undefined,
  peer: string | undefined,
): Caller {
  const owner = auth ? ownerFromAuth(auth) : binding === "session" && sessionId !== undefined ? sessionOwner(sessionId) : null;
  return peer === undefined ? { owner } : { owner, peer };
}
