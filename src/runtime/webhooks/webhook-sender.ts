import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "../../core/logger.js";
import type { TaskRecord } from "../../core/task.js";
import type { EventBus, Unsubscribe } from "../../events/event-bus.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { ClaimedDelivery, DeliverySettlement, OutboxStore } from "../../store/outbox-store.js";
import type { TaskStore } from "../../store/task-store.js";
import { addressPolicy, type AddressPolicy } from "../outbound/address-policy.js";
import { ConnectionPool } from "../outbound/connection-pool.js";
import { displayUrl, outboundPost, type OutboundResult } from "../outbound/outbound-post.js";
import { nextAttemptAt } from "./retry-schedule.js";
import { secretKey, signatureHeaders } from "./signature.js";
import type { WebhookSettings } from "./webhook-config.js";
import { eventBody, eventTypeOf, type WebhookEventType } from "./webhook-event.js";
import { rulesOf } from "./webhook-routing.js";

/** What a delivery attempt came to, for metrics: a bounded set. */
export type DeliveryOutcome = "delivered" | "retried" | "dead" | "disabled";

/** Hooks for metrics (the metrics layer implements it; the runtime never loads prom-client). */
export interface WebhookObserver {
  delivery(outcome: DeliveryOutcome, endpoint: string, durationMs: number): void;
}

export interface WebhookSenderOptions {
  store: TaskStore & OutboxStore;
  settings: WebhookSettings;
  bus: EventBus;
  /**
   * The events this process publishes itself (its own transitions): these wake the sender at once.
   * Without it every event does, other nodes' included.
   */
  publishedHere?: (listener: (event: TaskEvent) => void) => Unsubscribe;
  logger: Logger;
  now?: () => number;
  /**
   * Whether the rows of this process's own transitions are leased to this sender as they are
   * written (default true), so it reads them without a claim. A process that runs no handlers (a
   * cluster's front) writes few events — a cancel, an expiry, a lease it reaps — and leasing them
   * would cost each of its statements a step of its own; it claims them like any other's.
   */
  leaseOwnWrites?: boolean;
  /** The lease owner this process claims deliveries as. Default: host, pid and a random part. */
  senderId?: string;
  observer?: WebhookObserver;
}

/** Settled rows older than this past the retry window are deleted (the outbox stays small). */
const KEEP_SETTLED_MS = 7 * 24 * 3600_000;
/**
 * How long an event of another node waits before it wakes this sender (wakes in between are one):
 * the node that wrote the transition sends it at once, so here it is a backstop, and a cluster's
 * every node does not race for every event.
 */
const OTHER_NODES_WAKE_MS = 200;
/**
 * How long this process's own events gather before its sender reads their rows: one read for the
 * rows of every transition of that moment rather than one per transition (each read is a round
 * trip and statement's work on a machine that also runs the tasks).
 */
const OWN_LINGER_MS = 10;
/**
 * How late a sender may read rows leased to it at their write before it stops leasing the next
 * ones: beyond that, its slots (`concurrencyPerEndpoint`) do not keep up with the transitions
 * its process writes, and the cluster's other senders share them.
 */
const OWN_LAG_MS = 200;
/** The least time between two switches of {@link WebhookSender.leaseOwnWrites} (each costs every store connection a statement). */
const LEASE_SWITCH_MS = 1000;
/**
 * Deliveries in flight at once in one process, over every URL: sixteen URLs' worth at the default
 * `concurrencyPerEndpoint` (16), so it takes that many slow endpoints, each holding its every
 * slot, before one more waits for a slot of its own.
 */
const MAX_IN_FLIGHT = 256;

/**
 * Sends the outbox's deliveries: claims due rows with a lease (so in a cluster each is sent by one
 * process at a time), signs each as a Standard Webhook, posts it through the one outbound-safety
 * function, and records what came of it. 2xx: delivered; 410: the URL is disabled and the row
 * dead; anything else (a timeout, a refused or unreachable address, another status): retried with
 * back-off until the retry window ends, then dead. Runs beside task work, never in its path: at most
 * `concurrencyPerEndpoint` deliveries are in flight per URL, so a slow receiver holds only its own.
 */
export class WebhookSender {
  private readonly store: TaskStore & OutboxStore;
  private readonly settings: WebhookSettings;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly senderId: string;
  private readonly observer: WebhookObserver | undefined;
  private readonly bus: EventBus;
  private readonly publishedHere: WebhookSenderOptions["publishedHere"];
  private readonly leaseMs: number;
  private readonly inFlight = new Map<string, number>();
  /** Claimed deliveries waiting for a slot of their URL. */
  private readonly waiting = new Map<string, ClaimedDelivery[]>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: Unsubscribe[] = [];
  private backstop: NodeJS.Timeout | null = null;
  private lingering: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  private again = false;
  /** Rows leased to this sender when they were written may be waiting (ownDeliveries). */
  private ownDue = false;
  private leasing = false;
  /** False: this sender never leases its process's writes (see WebhookSenderOptions.leaseOwnWrites). */
  private readonly leasesOwnWrites: boolean;
  private leaseSwitchedAt = 0;
  /** Claimable rows may be waiting (claimDeliveries). */
  private claimDue = false;
  /** A look (own rows, claims) left rows out because their URL had no slot: looked for again when an attempt ends. */
  private ownBlocked = false;
  private claimBlocked = false;
  /** The deliveries this sender holds (in flight or waiting for a slot), and until when each one's lease holds. */
  private readonly held = new Map<string, number>();
  /** The longest one attempt can take. */
  private readonly attemptMs: number;
  private stopped = true;
  private lastPrune = 0;
  /** Keep-alive connections per checked address: a new TCP (and TLS) connection per delivery was most of its cost. */
  private readonly connections: ConnectionPool;
  /** The address policy of each allow-list in the configuration (a handful), built once rather than per delivery. */
  private readonly policies = new Map<string, AddressPolicy>();
  private readonly keys = new Map<string, Buffer>();
  private readonly rules = new Map<string, NonNullable<ReturnType<typeof rulesOf>>>();

  constructor(options: WebhookSenderOptions) {
    this.store = options.store;
    this.settings = options.settings;
    this.logger = options.logger;
    this.bus = options.bus;
    this.publishedHere = options.publishedHere;
    this.now = options.now ?? Date.now;
    this.observer = options.observer;
    this.leasesOwnWrites = options.leaseOwnWrites ?? true;
    this.senderId = options.senderId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    // Past the longest an attempt can take, with room: a lease that runs out lets another sender retry.
    this.attemptMs = options.settings.connectTimeoutMs + options.settings.responseTimeoutMs;
    this.leaseMs = this.attemptMs + 5000;
    // As many idle connections per URL as deliveries may be in flight to it: fewer, and each burst
    // would close the surplus and open them again for the next.
    this.connections = new ConnectionPool({ maxIdlePerDestination: Math.min(options.settings.concurrencyPerEndpoint, MAX_IN_FLIGHT) });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // The rows of this process's own transitions are leased to this sender as they are written:
    // it reads them (ownDeliveries) rather than claiming them, and the other nodes leave them be.
    this.leaseOwnWrites(true, true);
    // A move into a status that has an event may have written outbox rows: look at once rather
    // than at the next tick. Moves into `working` (a creation, a claim) write none, and waking on
    // them would cost every sending process of a cluster a query per task for nothing.
    const writesEvents = (event: TaskEvent): boolean => event.type === "status" && eventTypeOf(event.status) !== null;
    if (this.publishedHere === undefined) {
      this.unsubscribe.push(
        this.bus.onAny((event) => {
          if (writesEvents(event)) this.wake();
        }),
      );
    } else {
      this.unsubscribe.push(
        this.publishedHere((event) => {
          if (writesEvents(event)) this.ownSoon();
        }),
      );
      // Rows written elsewhere unleased (a process without a sender) or leased to a sender that
      // has gone: claimed on the next event of another node, or at the next tick.
      this.unsubscribe.push(
        this.bus.onAny((event) => {
          if (writesEvents(event)) this.wakeSoon();
        }),
      );
    }
    this.timer = setInterval(() => this.wake(), this.settings.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * Stops claiming; waits a moment for the attempts in flight. One still running after that keeps
   * its lease until it runs out, and is then sent again by whichever sender claims it.
   */
  async stop(): Promise<void> {
    if (!this.stopped) this.leaseOwnWrites(false);
    this.stopped = true;
    for (const off of this.unsubscribe.splice(0)) off();
    if (this.backstop !== null) clearTimeout(this.backstop);
    this.backstop = null;
    if (this.lingering !== null) clearTimeout(this.lingering);
    this.lingering = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.pass?.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise<void>((done) => {
        timer = setTimeout(done, 1000);
      }),
    ]);
    clearTimeout(timer);
    this.connections.close();
  }

  /** Looks for due deliveries now (single-flight: a wake during a pass runs one more pass after it). */
  wake(): void {
    this.ownDue = this.leasesOwnWrites;
    this.claimDue = true;
    this.run();
  }

  private run(): void {
    if (this.stopped) return;
    if (this.pass !== null) {
      this.again = true;
      return;
    }
    this.pass = this.claimAndSend()
      .catch((err: unknown) => this.logger.warn({ err }, "webhooks: claiming deliveries failed"))
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          this.run();
        }
      });
  }

  /**
   * Whether the rows this process writes are leased to this sender as they are written (see
   * {@link OutboxStore.leaseWrites}). Switched at most once per {@link LEASE_SWITCH_MS}, but for stopping.
   */
  private leaseOwnWrites(on: boolean, now = false): void {
    const at = this.now();
    if (on && !this.leasesOwnWrites) return;
    if (on === this.leasing || (on && !now && at - this.leaseSwitchedAt < LEASE_SWITCH_MS)) return;
    this.leasing = on;
    this.leaseSwitchedAt = at;
    this.store.leaseWrites(on ? { owner: this.senderId, leaseMs: this.leaseMs } : null);
  }

  /** Reads this sender's own rows within {@link OWN_LINGER_MS}, once however many events ask meanwhile. */
  private ownSoon(): void {
    if (this.lingering !== null || this.stopped) return;
    this.lingering = setTimeout(() => {
      this.lingering = null;
      this.ownDue = this.leasesOwnWrites;
      // Written unleased while this sender had more than it could send: claimed like any other's.
      if (!this.leasing) this.claimDue = true;
      this.run();
    }, OWN_LINGER_MS);
  }

  /** Wakes within {@link OTHER_NODES_WAKE_MS}, once however many ask meanwhile. */
  private wakeSoon(): void {
    if (this.backstop !== null || this.stopped) return;
    this.backstop = setTimeout(() => {
      this.backstop = null;
      this.claimDue = true;
      this.run();
    }, OTHER_NODES_WAKE_MS);
    this.backstop.unref();
  }

  private async claimAndSend(): Promise<void> {
    const limit = this.settings.concurrencyPerEndpoint;
    while (!this.stopped && (this.ownDue || this.claimDue)) {
      const inFlight = [...this.inFlight.values()].reduce((sum, count) => sum + count, 0);
      const room = MAX_IN_FLIGHT - inFlight;
      if (room <= 0) {
        // Looked for again when an attempt ends.
        this.ownBlocked ||= this.ownDue;
        this.claimBlocked ||= this.claimDue;
        this.ownDue = this.claimDue = false;
        break;
      }
      const now = this.now();
      if (this.ownDue) {
        this.ownDue = false;
        // Rows already leased to this sender wait here for a slot of their URL, up to `limit` per
        // URL; each is sent only with time enough left on its lease for a whole attempt.
        const full = [...this.waiting].filter(([, queue]) => queue.length >= limit).map(([url]) => url);
        const wanted = Math.min(room, 2 * limit);
        const own = await this.store.ownDeliveries(this.senderId, now, now + this.attemptMs, wanted, [...this.held.keys()], full);
        for (const delivery of own) this.take(delivery, delivery.at + this.leaseMs, limit);
        if (own.length >= wanted) this.ownDue = true;
        else if (full.length > 0) this.ownBlocked = true;
        // Its own rows wait longer than they should for a slot: the next ones are written unleased,
        // for every sender of the cluster to claim, until this one has caught up.
        const oldest = own[0];
        if (oldest !== undefined && now - oldest.at > OWN_LAG_MS && this.leasing) this.leaseOwnWrites(false);
        continue;
      }
      this.claimDue = false;
      const busy = [...this.inFlight].filter(([url, count]) => count >= limit || this.waiting.has(url)).map(([url]) => url);
      // At most `limit` per claim, so what waits here for a slot of its URL is bounded by one
      // claim and sent well within its lease (an attempt lasts at most its timeouts).
      const wanted = Math.min(room, limit);
      const claimed = await this.store.claimDeliveries(this.senderId, now, this.leaseMs, wanted, busy);
      for (const delivery of claimed) this.take(delivery, now + this.leaseMs, limit);
      // Fewer than asked: nothing else is due now but rows of a busy URL, claimed when one of its
      // attempts ends — no second, empty claim per pass.
      if (claimed.length >= wanted) this.claimDue = true;
      else if (busy.length > 0) this.claimBlocked = true;
    }
    await this.prune();
  }

  /** Holds `delivery` (leased to this sender until `until`): sent now, or when its URL has a slot. */
  private take(delivery: ClaimedDelivery, until: number, limit: number): void {
    if (this.held.has(delivery.id)) return;
    this.held.set(delivery.id, until);
    if ((this.inFlight.get(delivery.url) ?? 0) < limit) this.launch(delivery);
    else {
      const queue = this.waiting.get(delivery.url);
      if (queue === undefined) this.waiting.set(delivery.url, [delivery]);
      else queue.push(delivery);
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.url, (this.inFlight.get(delivery.url) ?? 0) + 1);
    // The URL's slot is free once the receiver has answered: recording the attempt is the store's
    // work, not the receiver's, and holding the slot through it would cap a sender's rate at one
    // delivery per slot per store round trip.
    let answered = false;
    const free = (): void => {
      if (answered) return;
      answered = true;
      const left = (this.inFlight.get(delivery.url) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(delivery.url);
      else this.inFlight.set(delivery.url, left);
      this.launchWaiting(delivery.url);
      if (!this.leasing && this.waiting.size === 0) this.leaseOwnWrites(true);
      // A slot is free: what was left out for want of one is looked for again.
      if (this.ownBlocked || this.claimBlocked) {
        this.ownDue ||= this.ownBlocked;
        this.claimDue ||= this.claimBlocked;
        this.ownBlocked = this.claimBlocked = false;
        this.run();
      }
    };
    const attempt = this.attempt(delivery, free).finally(() => {
      this.running.delete(attempt);
      this.held.delete(delivery.id);
      free();
    });
    this.running.add(attempt);
  }

  /** Sends the next held delivery of `url`, passing over those whose lease no longer has room for an attempt. */
  private launchWaiting(url: string): void {
    const queue = this.waiting.get(url);
    if (queue === undefined) return;
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if ((this.held.get(next.id) ?? 0) - this.now() >= this.attemptMs) {
        if (queue.length === 0) this.waiting.delete(url);
        this.launch(next);
        return;
      }
      // Its lease runs out before an attempt could end: another sender (or this one) claims it then.
      this.held.delete(next.id);
    }
    this.waiting.delete(url);
  }

  private async prune(): Promise<void> {
    const now = this.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    await this.store.pruneDeliveries(now - this.settings.retryWindowMs - KEEP_SETTLED_MS, 1000);
  }

  /** One attempt: `answered` is called once the receiver's answer (or the lack of one) is known, before it is recorded. */
  private async attempt(delivery: ClaimedDelivery, answered: () => void): Promise<void> {
    const started = this.now();
    try {
      const rules = this.rulesOf(delivery.endpoint);
      if (rules === null) {
        await this.finish(delivery, "dead", null, `endpoint ${delivery.endpoint} is no longer configured`, started);
        return;
      }
      const wantsResult = rules.includeResult && (delivery.status === "completed" || delivery.status === "failed");
      const task = wantsResult ? await this.store.get(delivery.taskId, { any: true }) : null;
      const body = eventBody(delivery.type as WebhookEventType, taskOf(delivery, task), delivery, {
        includeOwner: rules.includeOwner,
        ...(wantsResult && { includeResultUpTo: rules.maxResultBytes }),
      });
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "user-agent": "mcp-tasks-webhooks",
        ...signatureHeaders(this.keyOf(rules.secret), delivery.id, Math.floor(this.now() / 1000), body),
      };
      const traceparent = childTraceparent(delivery.trace?.["traceparent"]);
      if (traceparent !== null) headers["traceparent"] = traceparent;
      const result = await outboundPost(
        delivery.url,
        { headers, body },
        this.policyFor(rules.allowPrivate),
        {
          connectTimeoutMs: this.settings.connectTimeoutMs,
          responseTimeoutMs: this.settings.responseTimeoutMs,
          maxResponseBytes: this.settings.maxResponseBytes,
        },
        undefined,
        this.connections,
      );
      answered();
      await this.record(delivery, result, started);
    } catch (err) {
      this.logger.warn({ err, webhookId: delivery.id, url: displayUrl(delivery.url) }, "webhooks: a delivery attempt failed");
      await this.finish(delivery, "retry", null, "internal error", started).catch(() => {});
    }
  }

  /** The delivery rules of an endpoint id, looked up once per id the configuration holds (a handful). */
  private rulesOf(endpoint: string): ReturnType<typeof rulesOf> {
    const known = this.rules.get(endpoint);
    if (known !== undefined) return known;
    const rules = rulesOf(this.settings, endpoint);
    // Rows of endpoints no longer configured are each looked up once and dead-lettered: not kept.
    if (rules !== null) this.rules.set(endpoint, rules);
    return rules;
  }

  /** The key bytes of a configured secret, decoded once (the configuration holds a handful). */
  private keyOf(secret: string): Buffer {
    let key = this.keys.get(secret);
    if (key === undefined) {
      key = secretKey(secret);
      this.keys.set(secret, key);
    }
    return key;
  }

  private policyFor(allow: readonly string[]): AddressPolicy {
    const key = allow.join(" ");
    let policy = this.policies.get(key);
    if (policy === undefined) {
      policy = addressPolicy(allow);
      this.policies.set(key, policy);
    }
    return policy;
  }

  private async record(delivery: ClaimedDelivery, result: OutboundResult, started: number): Promise<void> {
    if (result.outcome === "answered" && result.status >= 200 && result.status < 300) {
      await this.finish(delivery, "delivered", result.status, null, started);
      return;
    }
    if (result.outcome === "answered" && result.status === 410) {
      await this.store.disableUrl(delivery.url, "answered 410 Gone", this.now());
      this.logger.warn({ url: displayUrl(delivery.url), endpoint: delivery.endpoint }, "webhooks: endpoint answered 410 Gone, disabled");
      await this.finish(delivery, "disabled", 410, "410 Gone: endpoint disabled", started);
      return;
    }
    const reason = result.outcome === "answered" ? `HTTP ${result.status}` : `${result.outcome}: ${result.reason}`;
    await this.finish(delivery, "retry", result.outcome === "answered" ? result.status : null, reason, started);
  }

  private async finish(
    delivery: ClaimedDelivery,
    how: "delivered" | "retry" | "dead" | "disabled",
    status: number | null,
    error: string | null,
    started: number,
  ): Promise<void> {
    const now = this.now();
    let settlement: DeliverySettlement;
    let outcome: DeliveryOutcome;
    if (how === "delivered") {
      settlement = { state: "delivered", nextAttemptAt: now, lastStatus: status, lastError: null, now };
      outcome = "delivered";
    } else if (how === "retry") {
      const next = nextAttemptAt(this.settings, delivery.attempts + 1, delivery.at, now);
      settlement = { state: next === null ? "dead" : "pending", nextAttemptAt: next ?? now, lastStatus: status, lastError: error, now };
      outcome = next === null ? "dead" : "retried";
    } else {
      settlement = { state: "dead", nextAttemptAt: now, lastStatus: status, lastError: error, now };
      outcome = how === "disabled" ? "disabled" : "dead";
    }
    if (outcome === "dead") {
      this.logger.warn(
        { webhookId: delivery.id, taskId: delivery.taskId, url: displayUrl(delivery.url), attempts: delivery.attempts + 1, error },
        "webhooks: delivery dead-lettered",
      );
    }
    const applied = await this.store.settleDelivery(delivery.id, delivery.lease, settlement);
    if (!applied) this.logger.debug({ webhookId: delivery.id }, "webhooks: lease lost before the attempt was recorded");
    this.observer?.delivery(outcome, delivery.endpoint, now - started);
  }
}

/** The task fields an event needs, from the outbox row (and the stored outcome when the result is carried). */
function taskOf(delivery: ClaimedDelivery, task: TaskRecord | null): TaskRecord {
  return {
    id: delivery.taskId,
    owner: delivery.owner,
    // Not part of an event: the body names the tool only.
    method: "",
    name: delivery.name,
    request: null,
    origin: { sessionId: null, progressToken: null, accepts: [] },
    createdAt: delivery.createdAt,
    ttlMs: delivery.ttlMs,
    pollIntervalMs: delivery.pollIntervalMs,
    retryable: false,
    status: delivery.status,
    statusMessage: delivery.statusMessage,
    updatedAt: delivery.at,
    expiresAt: null,
    outcome: task?.outcome ?? null,
    progress: null,
  };
}

/** A W3C traceparent for the delivery: the task's trace, a new span id (the delivery's own). */
export function childTraceparent(parent: string | undefined): string | null {
  const match = parent === undefined ? null : /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(parent);
  if (match === null) return null;
  return `00-${match[1]}-${randomBytes(8).toString("hex")}-${match[2]}`;
}
