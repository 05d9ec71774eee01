import type { TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import type { CallerLimitOptions } from "./limits/caller-limits.js";
import type { TaskStore } from "../store/task-store.js";
import type { EngineObserver } from "./engine-observer.js";
import type { TaskTracing } from "./task-tracing.js";
import type { Logger } from "../core/logger.js";
import type { LeaseReaperOptions } from "./cluster/lease-reaper.js";
import type { TaskRunner } from "./task-context.js";
import type { WorkerPoolOptions } from "./cluster/worker-pool.js";
import type { WebhooksInput } from "./webhooks/webhook-config.js";
import type { WebhookObserver } from "./webhooks/webhook-sender.js";

/** Engine configuration. Every default is listed in the (docs/limits.md). */
export interface EngineOptions extends CallerLimitOptions {
  /**
   * Where tasks live: `memoryStore()`, or `sqliteStore(file)` / `postgresStore(url)` from
   * `mcp-tasks/sqlite` / `mcp-tasks/postgres` for tasks that outlive the process. No default: a
   * durable server should not pick a file in the working directory, nor lose tasks silently.
   */
  store: TaskStore;
  /** Event bus (a TaskServer's default: in-process; a cluster needs a shared one such as pgEventBus). */
  bus: EventBus;
  runner: TaskRunner;
  logger?: Logger;
  /** Monitoring hooks (wake-up latency, limit refusals). Default: none. */
  observer?: EngineObserver;
  /**
   * Task events delivered as Standard Webhooks (docs/webhooks.md): the endpoints, the per-task
   * allow-list of URL prefixes, retries and limits. Checked at construction (a WebhookConfigError
   * names what is wrong). Default: none.
   */
  webhooks?: WebhooksInput;
  /** Metrics of webhook deliveries (`TaskMetrics` implements it). Default: none. */
  webhookObserver?: WebhookObserver;
  /** Told of every task a request reads, so its span can link to the task's trace. Default: nothing. */
  tracing?: TaskTracing;
  /** ttl defaults: 1 h default, 24 h max, 1 s min (T-TTL). */
  ttl?: Partial<TtlPolicy>;
  /** Suggested polling interval returned with every task (T-TTL-6). Default 1000 ms. */
  pollIntervalMs?: number | null;
  /** Page size of `tasks/list` (T-LIST-2). Default 50. */
  pageSize?: number;
  /** Non-terminal tasks one owner may have at once (T-TTL-7). Default 100. */
  maxActivePerOwner?: number;
  /**
   * Tasks one owner may have stored, in any status, until swept (T-TTL-7). Default 10,000. Tasks
   * without an owner (no authentication) share one allowance.
   */
  maxStoredPerOwner?: number;
  /** Unanswered input requests one task may have queued at once; one more rejects inside the handler. Default 16. */
  maxQueuedInputs?: number;
  /** Largest result or error a task may end with, as JSON bytes; over it the task fails instead. Default 4 MiB. */
  maxResultBytes?: number;
  /**
   * Single node: handlers run at once (the CLI's `--workers`); more tasks wait in the store's queue
   * and start as slots free, in the fair order (round-robin over owners, FIFO within one). Default:
   * unlimited. In a cluster each worker's `concurrency` is this.
   */
  maxRunning?: number;
  /** Handlers of one owner running at once, store-wide (a whole cluster). Default: no cap. */
  maxRunningPerOwner?: number;
  /**
   * Tasks of one owner waiting in the queue (created, no handler started yet); one more creation
   * is refused at once (-32600, `data.name` "queued_tasks", `retryAfterMs`). Default: no bound.
   */
  maxQueuedPerOwner?: number;
  /** Handlers of a task name (a tool's `concurrency`) running at once, store-wide; read at each claim. */
  concurrencyByName?: () => Readonly<Record<string, number>>;
  /**
   * A finished task and its result stay fetchable at least this long after it ended, even past
   * its ttl (docs/limits.md, Retention). Default 0: the ttl the requestor asked for, and the server
   * reported, is the whole lifetime; a longer keep holds finished tasks against `maxStoredPerOwner`.
   */
  keepFinishedMs?: number;
  /**
   * How long the id of a task the sweeper deleted still answers "Task has expired" rather than
   * "Task not found". Default 24 hours (the default maximum ttl); 0 forgets at once.
   */
  rememberExpiredMs?: number;
  /** How often expired tasks are failed and swept (T-TTL-7). Default 1000 ms. */
  sweepIntervalMs?: number;
  /** Rows handled per sweep statement. Default 500. */
  sweepBatch?: number;
  /** Longest a blocked `tasks/result` sleeps without an event before re-reading the store. Default 30 s. */
  backstopMs?: number;
  /**
   * Log each request's arguments with its `created` audit line (T-SEC-5). Default false: arguments
   * may hold what a log must not; the store and the web view (with its redaction) keep them.
   */
  auditArguments?: boolean;
  /**
   * How long an emitted event is kept, so a task that starts waiting for it a moment later still
   * sees it (docs/limits.md, Events). Default 10 minutes.
   */
  eventWindowMs?: number;
  /** Largest event payload, in JSON bytes. Default 64 KiB. */
  maxEventBytes?: number;
  /** Clock, for tests of expiry and of the rate limits. */
  now?: () => number;
  /**
   * Cluster mode: tasks wait in the store (which must be a lease store, e.g. PostgreSQL) until a
   * worker claims them — this process's pool (`concurrency` > 0) or any other's. Absent: tasks run
   * in this process as soon as they are created (single node), recovered on restart.
   */
  cluster?: WorkerPoolOptions & LeaseReaperOptions;
}
