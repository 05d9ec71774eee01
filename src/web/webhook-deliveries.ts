/**
 * The web API of webhook deliveries (docs/webhooks.md): what was sent where, how it went, and a
 * redeliver action. Admins see and redeliver everything (the `mcp-tasks webhooks` commands use
 * these routes); a viewer sees and redelivers the deliveries of their own tasks. URLs are shown
 * without their query (a per-task URL may carry a token there); secrets are never part of a row.
 */
import { z } from "zod";
import { readBody } from "../http/read-body.js";
import { displayUrl } from "../runtime/outbound/outbound-post.js";
import type { OutboxDelivery, OutboxStore } from "../store/outbox-store.js";
import type { ApiDeps, ApiHandler } from "./web-api.js";
import { WebRequestError } from "./web-error.js";

const MAX_LISTED = 500;

/** A delivery as the API shows it. */
function shown(row: OutboxDelivery): Record<string, unknown> {
  return {
    id: row.id,
    taskId: row.taskId,
    url: displayUrl(row.url),
    endpoint: row.endpoint,
    type: row.type,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    lastAttemptAt: row.lastAttemptAt,
    nextAttemptAt: row.state === "pending" ? row.nextAttemptAt : null,
    at: row.at,
  };
}

function outboxOf(deps: ApiDeps): OutboxStore {
  const outbox = deps.app.engine.outbox;
  if (outbox === null) throw new WebRequestError("not_found", "This server's store keeps no webhook deliveries");
  return outbox;
}

const States = z.enum(["pending", "delivered", "dead"]);

/**
 * `GET /tasks/api/webhooks?taskId=…&url=…&state=…`: deliveries, newest first, and the disabled
 * URLs. Without a taskId the viewer must be an admin; with one, it must be a task the viewer sees.
 */
export function listDeliveries(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx) => {
    const query = ctx.url.searchParams;
    const taskId = query.get("taskId") ?? undefined;
    const url = query.get("url") ?? undefined;
    const state = query.get("state");
    const parsedState = state === null ? undefined : States.safeParse(state);
    if (parsedState !== undefined && !parsedState.success)
      throw new WebRequestError("invalid_params", "state must be pending, delivered or dead");
    if (taskId === undefined && !viewer.admin)
      throw new WebRequestError("forbidden", "Every task's webhook deliveries are shown to admins only");
    if (taskId !== undefined && (await deps.app.engine.inspect.task(taskId, viewer.scope)) === null) {
      throw new WebRequestError("not_found", "Task not found");
    }
    const outbox = outboxOf(deps);
    const rows = await outbox.deliveries(
      {
        ...(taskId !== undefined && { taskId }),
        ...(url !== undefined && { url }),
        ...(parsedState?.success && { state: parsedState.data }),
      },
      MAX_LISTED,
    );
    const disabled = viewer.admin ? (await outbox.disabledUrls()).map((entry) => ({ ...entry, url: displayUrl(entry.url) })) : [];
    return { deliveries: rows.map(shown), disabled, stats: viewer.admin ? await outbox.outboxStats() : undefined };
  };
}

const RedeliverBody = z.union([
  z.strictObject({ id: z.string().min(1).max(200) }),
  z.strictObject({ url: z.string().min(1).max(4000) }),
  z.strictObject({ taskId: z.string().min(1).max(256) }),
]);

/**
 * `POST /tasks/api/webhooks/redeliver` with `{"id": …}` (one delivery, sent again even if it was
 * delivered), `{"url": …}` (admin: every dead delivery to the URL, which is re-enabled after a 410)
 * or `{"taskId": …}` (the dead deliveries of a task the viewer sees). Answers how many were queued.
 */
export function redeliver(deps: ApiDeps): ApiHandler {
  return async (viewer, ctx, req) => {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, 16 * 1024));
    } catch {
      throw new WebRequestError("invalid_params", 'Invalid body: send {"id": …}, {"url": …} or {"taskId": …}');
    }
    const parsed = RedeliverBody.safeParse(body);
    if (!parsed.success) throw new WebRequestError("invalid_params", 'Invalid body: send {"id": …}, {"url": …} or {"taskId": …}');
    const outbox = outboxOf(deps);
    const target = parsed.data;
    if ("url" in target && !viewer.admin) throw new WebRequestError("forbidden", "Redelivering to a URL is for admins only");
    let taskId: string | undefined = "taskId" in target ? target.taskId : undefined;
    if ("id" in target) {
      const [row] = await outbox.deliveries({ id: target.id }, 1);
      if (row === undefined) throw new WebRequestError("not_found", "Delivery not found");
      taskId = row.taskId;
    }
    if (taskId !== undefined && !viewer.admin && (await deps.app.engine.inspect.task(taskId, viewer.scope)) === null) {
      throw new WebRequestError("not_found", "Task not found");
    }
    const queued = await outbox.redeliver(target, Date.now());
    ctx.logger.info(
      {
        audit: "webhook_redeliver",
        via: "web",
        principal: viewer.principal,
        ...("url" in target ? { url: displayUrl(target.url) } : target),
        queued,
      },
      "webhook deliveries queued again",
    );
    deps.app.engine.webhookSender?.wake();
    return { queued };
  };
}
