/** What every store's outbox shares: the rows a transition writes, and the claimable-row rule. */
import { randomBytes } from "node:crypto";
import type { TaskRecord } from "../core/task.js";
import type { OutboxDelivery } from "./outbox-store.js";

/** Statuses whose entry is an event (`working` is none). */
export const EVENT_STATUSES = ["input_required", "completed", "failed", "cancelled"] as const;

/** A fresh `webhook-id` (the SQL stores make the same shape: "msg_" and 32 hex digits). */
export function newDeliveryId(): string {
  return `msg_${randomBytes(16).toString("hex")}`;
}

/**
 * The outbox rows of the transition that left `task` as it is: one per route of its origin that
 * wants the event `task.<status>`. The SQL stores do the same inside their transition statement
 * (a trigger), so it holds for every path that writes a status.
 */
export function transitionDeliveries(task: TaskRecord, seq: () => number): OutboxDelivery[] {
  const type = `task.${task.status}`;
  if (!(EVENT_STATUSES as readonly string[]).includes(task.status)) return [];
  return (task.origin.webhooks ?? [])
    .filter((route) => route.events.includes(type))
    .map((route) => ({
      id: newDeliveryId(),
      seq: seq(),
      taskId: task.id,
      url: route.url,
      endpoint: route.endpoint,
      type,
      status: task.status,
      statusMessage: task.statusMessage,
      at: task.updatedAt,
      owner: task.owner,
      name: task.name,
      createdAt: task.createdAt,
      ttlMs: task.ttlMs,
      pollIntervalMs: task.pollIntervalMs,
      trace: task.origin.trace ?? null,
      state: "pending",
      attempts: 0,
      nextAttemptAt: task.updatedAt,
      lastStatus: null,
      lastError: null,
      lastAttemptAt: null,
    }));
}
