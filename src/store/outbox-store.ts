import type { TaskStatus } from "../core/task-status.js";
import type { TaskStore } from "./task-store.js";

/**
 * Where a delivery stands: `pending` (to be sent, now or at `nextAttemptAt`), `delivered` (a 2xx
 * answer), `dead` (its retry window ran out, or its endpoint answered 410 Gone).
 */
export type DeliveryState = "pending" | "delivered" | "dead";

/**
 * One event for one endpoint, written by the store in the same atomic write as the transition it
 * reports (see `TaskOrigin.webhooks`): what the transition was, taken then, and how its delivery goes.
 */
export interface OutboxDelivery {
  /** The Standard Webhooks `webhook-id`: fixed when the row is written, so every retry carries it. */
  id: string;
  /** Order of the rows of one task for one URL (the outbox's insertion order). */
  seq: number;
  taskId: string;
  /** Where it goes: the route's URL (also the key of per-endpoint order, concurrency and 410). */
  url: string;
  /** The configured endpoint or per-task prefix whose secret and rules apply. */
  endpoint: string;
  type: string;
  /** The task as the transition left it. */
  status: TaskStatus;
  statusMessage: string | null;
  /** When the transition was written (the task's updatedAt then). */
  at: number;
  owner: string | null;
  name: string;
  createdAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  /** The creating request's trace context, as the task's origin keeps it (for `traceparent`). */
  trace: Readonly<Record<string, string>> | null;
  state: DeliveryState;
  attempts: number;
  /** When the next attempt is due (pending rows). */
  nextAttemptAt: number;
  /** The HTTP status of the last answer, when there was one. */
  lastStatus: number | null;
  /** What went wrong last: a timeout, a refused address, a network error, "HTTP 500" (never a secret). */
  lastError: string | null;
  /** When the last attempt ended (null before the first). */
  lastAttemptAt: number | null;
}

/** A claimed delivery and the fence its settle must name. */
export interface ClaimedDelivery extends OutboxDelivery {
  readonly lease: { readonly owner: string; readonly generation: number };
}

/** What one attempt came to. */
export interface DeliverySettlement {
  state: DeliveryState;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  now: number;
}

/** Which deliveries {@link OutboxStore.deliveries} lists. */
export interface DeliveryFilter {
  /** One delivery by its `webhook-id`: looked up by the outbox's unique index, never by a scan. */
  id?: string;
  taskId?: string;
  url?: string;
  state?: DeliveryState;
}

/** Queue figures for /metrics. */
export interface OutboxStats {
  pending: number;
  dead: number;
  /** When the oldest pending delivery's event was written; null when none is pending. */
  oldestPendingAt: number | null;
}

/**
 * The webhook outbox of a {@link TaskStore} (checked by `src/testing/outbox-contract.ts` against
 * every implementation). Rows are written by the store's own transition writes; this interface
 * only claims, settles, lists and re-queues them.
 *
 * - A row is claimable when it is pending, due, not leased (or its lease ran out), its URL is not
 *   disabled, and it is the oldest pending row of its (task, URL) pair — events of one task reach
 *   one endpoint in order.
 * - A claim is a lease fenced like task writes: {@link settleDelivery} applies only while the
 *   same owner and generation hold it, so a sender that stalled past its lease changes nothing.
 * - After {@link leaseWrites}, the rows this store object writes are leased to its sender from the
 *   start (generation 1, until the event's time plus the lease): that sender reads them with
 *   {@link ownDeliveries}, with no claim statement, and no other sender can claim them before the
 *   lease runs out — a process killed between the commit and the send loses nothing, its rows are
 *   claimed by another sender once their lease has run out.
 */
export interface OutboxStore {
  readonly keepsOutbox: true;
  /** Leases up to `limit` claimable deliveries (oldest first) to `owner` until `now + leaseMs`, none of `excludeUrls`. */
  claimDeliveries(owner: string, now: number, leaseMs: number, limit: number, excludeUrls?: readonly string[]): Promise<ClaimedDelivery[]>;
  /**
   * Leases every row this store object writes from now on to `lease.owner`, until the event's time
   * plus `lease.leaseMs`, as a claim would; null: rows are written unleased again. Meant for the
   * one sender of the process that writes the transitions.
   */
  leaseWrites(lease: { owner: string; leaseMs: number } | null): void;
  /**
   * Up to `limit` rows leased to `owner` that a claim by `owner` could hand out (pending, due, the
   * oldest pending row of their pair, URL not disabled nor among `excludeUrls`), whose lease holds
   * until after `until`, none of `skipIds` (rows the caller already holds); oldest first. Reads
   * only: the lease was taken when the row was written ({@link leaseWrites}).
   */
  ownDeliveries(
    owner: string,
    now: number,
    until: number,
    limit: number,
    skipIds: readonly string[],
    excludeUrls?: readonly string[],
  ): Promise<ClaimedDelivery[]>;
  /** Records an attempt; false when the lease is no longer this claim's (nothing written). */
  settleDelivery(id: string, lease: ClaimedDelivery["lease"], result: DeliverySettlement): Promise<boolean>;
  /** Stops deliveries to `url` (it answered 410 Gone) until {@link redeliver} re-enables it. */
  disableUrl(url: string, reason: string, now: number): Promise<void>;
  /** Disabled URLs, with why and since when. */
  disabledUrls(): Promise<Array<{ url: string; reason: string; at: number }>>;
  /** Deliveries matching `filter`, newest first, at most `limit`. */
  deliveries(filter: DeliveryFilter, limit: number): Promise<OutboxDelivery[]>;
  /**
   * Sends again: every dead delivery matching `filter` (or the one named by `id`, whatever its
   * state unless pending) becomes pending and due `now` with its attempts reset, and the URLs
   * concerned are re-enabled. Returns how many.
   */
  redeliver(filter: DeliveryFilter, now: number): Promise<number>;
  outboxStats(): Promise<OutboxStats>;
  /** Deletes settled (delivered or dead) rows whose event is older than `before`; returns how many. */
  pruneDeliveries(before: number, limit: number): Promise<number>;
}

/** Whether `store` keeps a webhook outbox ({@link OutboxStore}): every store of this package does. */
export function isOutboxStore(store: TaskStore): store is TaskStore & OutboxStore {
  return (store as Partial<OutboxStore>).keepsOutbox === true;
}
