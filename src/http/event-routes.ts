import type { IncomingMessage, ServerResponse } from "node:http";
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import { callerOf } from "../mcp/owner.js";
import type { TaskServer } from "../mcp/task-server.js";
import type { Authenticate } from "./auth/challenge.js";
import { ADMIN_SCOPE } from "./bearer-auth.js";
import { bearerTokenOf, SecretSet } from "./bearer-token.js";
import { sendJson } from "./json-rpc-response.js";
import { BodyTooLargeError, readBody } from "./read-body.js";
import type { HttpRoute, RouteContext } from "./route-table.js";
import { HttpFailure, httpStatusOf } from "./rpc-http-errors.js";

/** What `POST /events/{name}` needs from the server it is mounted on. */
export interface EventRouteOptions {
  /** The MCP endpoint's authentication: the same tokens, the same owner, the same 401/403. */
  authenticate: Authenticate;
  /** Tokens that may emit for any owner (`?owner=`): the web view's admin tokens. */
  adminTokens?: readonly string[];
  /** Largest body read; the payload's own limit (`maxEventBytes`) is the engine's. */
  maxBodyBytes: number;
}

/** The principal the audit log names for an admin token. */
const ADMIN_TOKEN_PRINCIPAL = "admin";

/**
 * `POST /events/{name}` (docs/durable-execution.md, Events): emits an event whose payload is the
 * JSON body (empty: null), for the owner the bearer token resolves to exactly as on the MCP
 * endpoint, so a requestor wakes its own tasks only. An admin — the admin token, or a token with
 * the `mcp-tasks:admin` scope — names another owner with `?owner=<owner key>` (the admin token
 * without it: tasks created without authentication). The name may hold "/" (`approval/<taskId>`),
 * as path segments or escaped. Answers `{seq, woken}`; refusals are JSON `{error: {message}}`.
 * `POST /events` emits a batch for that owner in one store write: the body
 * `{"events": [{"name", "payload"?}, …]}` (at most 1,000, each checked before any is stored),
 * answered `{events: [{seq, woken}, …], woken}` in the same order.
 */
export function eventRoutes(app: TaskServer, options: EventRouteOptions): HttpRoute[] {
  const adminTokens = new SecretSet(options.adminTokens ?? []);
  const emit = async (req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> => {
    const caller = await callerFor(req, res, ctx, adminTokens, options.authenticate, app);
    if (caller === null) return;
    let payload: unknown = null;
    try {
      const body = await readBody(req, options.maxBodyBytes);
      if (body.trim() !== "") payload = JSON.parse(body) as unknown;
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        app.engine.observer.limitRejected("body_bytes");
        refuse(res, HttpFailure.bodyTooLarge.status, `The body is larger than ${options.maxBodyBytes} bytes`);
      } else refuse(res, 400, "The body must be JSON (the event's payload) or empty");
      return;
    }
    await answer(res, async () => {
      const report = await app.engine.emit(caller, ctx.params["name"], payload);
      return { seq: report.seq, woken: report.woken };
    });
  };
  const emitBatch = async (req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> => {
    const caller = await callerFor(req, res, ctx, adminTokens, options.authenticate, app);
    if (caller === null) return;
    let events: Array<{ name: unknown; payload: unknown }>;
    try {
      const body = JSON.parse(await readBody(req, options.maxBodyBytes)) as { events?: unknown } | null;
      const list = body?.events;
      if (
        !Array.isArray(list) ||
        !list.every((e): e is Record<string, unknown> => typeof e === "object" && e !== null && !Array.isArray(e))
      ) {
        refuse(res, 400, 'The body must be {"events": [{"name": …, "payload": …}, …]}');
        return;
      }
      events = list.map((e) => ({ name: e["name"], payload: e["payload"] ?? null }));
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        app.engine.observer.limitRejected("body_bytes");
        refuse(res, HttpFailure.bodyTooLarge.status, `The body is larger than ${options.maxBodyBytes} bytes`);
      } else refuse(res, 400, 'The body must be {"events": [{"name": …, "payload": …}, …]}');
      return;
    }
    await answer(res, async () => {
      const reports = await app.engine.emitMany(caller, events);
      return { events: reports, woken: reports.reduce((sum, r) => sum + r.woken, 0) };
    });
  };
  return [
    { path: "/events", methods: { POST: emitBatch } },
    { path: "/events/*name", methods: { POST: emit } },
  ];
}

/**
 * The caller an emit acts as, or null once a refusal was answered. The admin token is looked at
 * first: it is no token the MCP endpoint's verifier knows.
 */
async function callerFor(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RouteContext,
  adminTokens: SecretSet,
  authenticate: Authenticate,
  app: TaskServer,
): Promise<Caller | null> {
  const named = ctx.url.searchParams.get("owner");
  const peer = ctx.peer === undefined ? {} : { peer: ctx.peer };
  if (adminTokens.has(bearerTokenOf(req))) {
    return { owner: named === null || named === "" ? null : named, ...peer, actingAs: ADMIN_TOKEN_PRINCIPAL };
  }
  const auth = await authenticate(req, res);
  if (auth === false) return null;
  const own = callerOf(auth, app.config.bind, undefined, ctx.peer);
  if (named === null || named === own.owner) return own;
  if (auth?.scopes.includes(ADMIN_SCOPE)) return { owner: named === "" ? null : named, ...peer, actingAs: auth.clientId };
  refuse(
    res,
    HttpFailure.forbidden.status,
    "Emitting an event for another owner needs the admin token (or a token with the mcp-tasks:admin scope)",
  );
  return null;
}

/** Answers what `emit` returns, or the refusal of the engine's TaskError (a server error is thrown on). */
async function answer(res: ServerResponse, emit: () => Promise<object>): Promise<void> {
  try {
    sendJson(res, 200, await emit(), { "cache-control": "no-store" });
  } catch (error) {
    if (!(error instanceof TaskError)) throw error;
    const data = error.data as { name?: unknown } | undefined;
    // The payload over `maxEventBytes` is a body too large for this endpoint, whatever its JSON-RPC code.
    const status = data?.name === "event_bytes" ? HttpFailure.bodyTooLarge.status : httpStatusOf(error);
    if (status >= 500) throw error;
    refuse(res, status, error.message);
  }
}

function refuse(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message } }, { "cache-control": "no-store" });
}
