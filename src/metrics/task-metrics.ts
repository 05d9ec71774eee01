import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { ACTIVE_STATUSES, isTerminal } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import type { EngineObserver, LimitName } from "../runtime/engine-observer.js";
import { isLeaseStore } from "../store/lease-store.js";
import { isQueueView } from "../store/run-queue.js";
import { isWaitStore, type ParkedCounts } from "../store/wait-store.js";
import { isOutboxStore } from "../store/outbox-store.js";
import type { DeliveryOutcome, WebhookObserver } from "../runtime/webhooks/webhook-sender.js";
import type { TaskStore } from "../store/task-store.js";
import { instrumentStore } from "./instrumented-store.js";
import { isToolPauseStore } from "../store/tool-pause-store.js";
import { OPERATION_DURATION_BUCKETS, RESULT_WAKEUP_BUCKETS, STORE_OPERATION_BUCKETS, TASK_DURATION_BUCKETS } from "./operation-buckets.js";
import { otelTaskMetrics } from "./otel-task-metrics.js";

/** The parked gauge's label values: a fixed set, whatever the store holds. */
const PARKED_REASONS: ReadonlyArray<keyof ParkedCounts> = ["input", "timer", "event"];

/** Every metric name starts with this. */
export const METRIC_PREFIX = "mcp_tasks_";

/**
 * The Prometheus metrics of one task server, in a registry of its own (several servers in one
 * process, as in tests, never share or clash). Counters and histograms are fed by the store
 * writes this process makes and by the engine's {@link EngineObserver} hooks; the gauges are read
 * from the store at scrape time, so they are right after a restart and across processes sharing it.
 * The task counters and histograms also go to the OpenTelemetry API meter (`mcp.tasks.*`,
 * docs/tracing.md), exported when an SDK with a metric reader is registered.
 */
export class TaskMetrics implements EngineObserver, WebhookObserver {
  /** Serve `registry.metrics()` with content type `registry.contentType`. */
  readonly registry = new Registry();
  private store: TaskStore | null = null;
  private processMetrics = false;
  private stopObservingStore: (() => void) | undefined;

  private readonly created = new Counter({
    name: `${METRIC_PREFIX}created_total`,
    help: "Tasks created, by tool.",
    labelNames: ["tool"] as const,
    registers: [this.registry],
  });

  private readonly finished = new Counter({
    name: `${METRIC_PREFIX}finished_total`,
    help: "Tasks that reached a terminal status (completed, failed, cancelled), by tool and status.",
    labelNames: ["tool", "status"] as const,
    registers: [this.registry],
  });

  private readonly duration = new Histogram({
    name: `${METRIC_PREFIX}duration_seconds`,
    help: "Time from a task's creation to its terminal status, by tool and status.",
    labelNames: ["tool", "status"] as const,
    buckets: TASK_DURATION_BUCKETS,
    registers: [this.registry],
  });

  /**
   * The OpenTelemetry MCP conventions' `mcp.server.operation.duration`, under its Prometheus name
   * and with the conventions' buckets; the labels are its attributes, dots as underscores.
   */
  private readonly operations = new Histogram({
    name: "mcp_server_operation_duration_seconds",
    help: "MCP request duration as observed on the server, from receipt until the result or error is sent, by method, tool and error type.",
    labelNames: ["mcp_method_name", "gen_ai_tool_name", "error_type"] as const,
    buckets: OPERATION_DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly wakeup = new Histogram({
    name: `${METRIC_PREFIX}result_wakeup_seconds`,
    help: "For a tasks/result that waited: time from the task's terminal status write to the answer.",
    buckets: RESULT_WAKEUP_BUCKETS,
    registers: [this.registry],
  });

  private readonly waiting = new Gauge({
    name: `${METRIC_PREFIX}results_waiting`,
    help: "tasks/result requests this process holds open, waiting for their task to end.",
    registers: [this.registry],
  });

  private readonly storeLatency = new Histogram({
    name: `${METRIC_PREFIX}store_operation_seconds`,
    help: "Latency of task store operations, by operation.",
    labelNames: ["operation"] as const,
    buckets: STORE_OPERATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly storeErrors = new Counter({
    name: `${METRIC_PREFIX}store_errors_total`,
    help: "Task store operations that failed, by operation.",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });

  private readonly rejections = new Counter({
    name: `${METRIC_PREFIX}limit_rejections_total`,
    help: "Refusals by a limit: active_tasks and stored_tasks (per owner), queued_inputs (per task), queued_tasks (per owner, the queue bound), result_bytes, argument_bytes, body_bytes; task_operations and failed_lookups (per owner or address, T-SEC-4); sessions and sessions_per_client (local HTTP sessions); event_streams and event_streams_per_viewer (the web view's event streams); event_bytes (an event payload over maxEventBytes).",
    labelNames: ["limit"] as const,
    registers: [this.registry],
  });

  // Both counted once per task across a cluster: the store's write that ends the task's retention
  // (or first records a delivery) happens on exactly one node.
  private readonly expiredUnread = new Counter({
    name: `${METRIC_PREFIX}results_expired_unread_total`,
    help: "Finished tasks (completed or failed) whose result nobody fetched (tasks/result, or a 2026-07-28 tasks/get of the finished task) before their retention ended and the sweeper deleted them.",
    registers: [this.registry],
  });

  private readonly resultsFetched = new Counter({
    name: `${METRIC_PREFIX}results_fetched_total`,
    help: "Finished tasks whose result was delivered to a requestor, counted at the first delivery.",
    registers: [this.registry],
  });

  private readonly eventsEmitted = new Counter({
    name: `${METRIC_PREFIX}events_emitted_total`,
    help: "Events emitted through this process (app.emit, POST /events/{name}, the web view), whether or not they woke a task.",
    registers: [this.registry],
  });

  // Counted once per wait across a cluster: the store satisfies each wait in exactly one write.
  private readonly waitsWokenTotal = new Counter({
    name: `${METRIC_PREFIX}waits_woken_total`,
    help: "Waiting tasks woken by this process, by reason: event (an emitted event) or timer (a ctx.sleep that came due, or a waitForEvent that timed out).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  /** One MCP request answered: `seconds` from its receipt to its answer (see the `operations` histogram). */
  /**
   * Adds `mcp_tasks_tool_paused{tool}`: 1 for each tool `toolNames` lists that is paused (as the
   * store has it at the scrape, so the same on every node), 0 for the others. Only the server's
   * tools are labels: a bounded set, whatever names the store holds. TaskServer calls it.
   */
  watchToolPauses(toolNames: () => readonly string[]): void {
    const store = (): TaskStore | null => this.store;
    new Gauge({
      name: `${METRIC_PREFIX}tool_paused`,
      help: "1 while a tool is paused (its new tasks are queued and none starts, on every node), 0 otherwise; one series per tool this server serves.",
      labelNames: ["tool"] as const,
      registers: [this.registry],
      async collect() {
        const current = store();
        const paused = current && isToolPauseStore(current) ? new Set((await current.pausedTools()).map((pause) => pause.name)) : new Set();
        // Tools removed since go: a gauge keeps every label set it was ever given.
        this.reset();
        for (const tool of toolNames()) this.set({ tool }, paused.has(tool) ? 1 : 0);
      },
    });
  }

  recordOperation(operation: { method: string; target?: string; errorType?: string }, seconds: number): void {
    this.operations.observe(
      {
        mcp_method_name: operation.method,
        gen_ai_tool_name: operation.method === "tools/call" ? (operation.target ?? "") : "",
        error_type: operation.errorType ?? "",
      },
      seconds,
    );
  }

  private readonly leaseLosses = new Counter({
    name: `${METRIC_PREFIX}lease_losses_total`,
    help: "Cluster mode: tasks whose worker stopped renewing its lease, by what the reaper did (requeued, failed).",
    labelNames: ["tool", "action"] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: `${METRIC_PREFIX}webhook_deliveries_total`,
    help: "Webhook delivery attempts, by outcome (delivered, retried, dead, disabled) and configured endpoint id (never a URL).",
    labelNames: ["outcome", "endpoint"] as const,
    registers: [this.registry],
  });

  constructor() {
    const store = (): TaskStore | null => this.store;
    new Gauge({
      name: `${METRIC_PREFIX}current`,
      help: "Tasks currently working or waiting for input (input_required), as the store has them.",
      labelNames: ["status"] as const,
      registers: [this.registry],
      async collect() {
        const current = store();
        if (!current) return;
        const counts = await current.countByStatus({ scope: { any: true }, statuses: ACTIVE_STATUSES });
        for (const status of ACTIVE_STATUSES) this.set({ status }, counts[status]);
      },
    });
  }

  /**
   * Returns `store` wrapped so its operations and writes feed these metrics, and reads the
   * gauges from it. Call once, with the store the engine will use.
   */
  instrument<S extends TaskStore>(store: S): S {
    this.store = store;
    this.stopObservingStore?.();
    this.stopObservingStore = otelTaskMetrics.observeStore(async (observe) => {
      const counts = await store.countByStatus({ scope: { any: true }, statuses: ACTIVE_STATUSES });
      for (const status of ACTIVE_STATUSES) observe.current(status, counts[status]);
      if (isLeaseStore(store)) observe.queueDepth(await store.queueDepth());
      if (isQueueView(store)) for (const depth of await store.queueDepths()) observe.queued(depth.owner ?? "", depth.name, depth.queued);
    });
    if (isLeaseStore(store)) {
      const leases = store;
      new Gauge({
        name: `${METRIC_PREFIX}queue_depth`,
        help: "Tasks waiting for a worker to claim them (cluster mode).",
        registers: [this.registry],
        async collect() {
          this.set(await leases.queueDepth());
        },
      });
    }
    if (isWaitStore(store)) {
      const waits = store;
      new Gauge({
        name: `${METRIC_PREFIX}parked`,
        help: "Tasks parked (their handler unloaded, holding no slot, lease or memory), by what they wait for: input (an unanswered question), timer, event; as the store has them.",
        labelNames: ["reason"] as const,
        registers: [this.registry],
        async collect() {
          const counts = await waits.parkedCounts();
          for (const reason of PARKED_REASONS) this.set({ reason }, counts[reason]);
        },
      });
      new Gauge({
        name: `${METRIC_PREFIX}timers_due`,
        help: "Timers and event timeouts whose time has come and that have not fired yet (the timer loop fires them within about a second; a value that stays up means it is behind).",
        registers: [this.registry],
        async collect() {
          this.set(await waits.countDue(Date.now()));
        },
      });
      new Gauge({
        name: `${METRIC_PREFIX}timers_overdue_seconds`,
        help: "How long ago the earliest timer or event timeout not yet fired came due (0 when none is due).",
        registers: [this.registry],
        async collect() {
          const next = await waits.nextDue();
          this.set(next === null ? 0 : Math.max(0, Date.now() - next) / 1000);
        },
      });
    }
    if (isQueueView(store)) {
      const queue = store;
      new Gauge({
        name: `${METRIC_PREFIX}queued`,
        help: 'Tasks waiting in the queue for a handler (created, not started), by owner ("" for tasks without one) and tool; sum by (owner) or by (tool).',
        labelNames: ["owner", "tool"] as const,
        registers: [this.registry],
        async collect() {
          const depths = await queue.queueDepths();
          // Pairs whose queue emptied go: a gauge keeps every label set it was ever given.
          this.reset();
          for (const depth of depths) this.set({ owner: depth.owner ?? "", tool: depth.name }, depth.queued);
        },
      });
    }
    if (isOutboxStore(store)) {
      const outbox = store;
      new Gauge({
        name: `${METRIC_PREFIX}webhook_queue`,
        help: "Webhook deliveries in the outbox, by state: pending (to be sent or retried) and dead (dead-lettered).",
        labelNames: ["state"] as const,
        registers: [this.registry],
        async collect() {
          const stats = await outbox.outboxStats();
          this.set({ state: "pending" }, stats.pending);
          this.set({ state: "dead" }, stats.dead);
        },
      });
      new Gauge({
        name: `${METRIC_PREFIX}webhook_oldest_pending_seconds`,
        help: "Age of the oldest webhook event not yet delivered (0 when none is pending).",
        registers: [this.registry],
        async collect() {
          const oldest = (await outbox.outboxStats()).oldestPendingAt;
          this.set(oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1000);
        },
      });
    }
    return instrumentStore(store, {
      operation: (name, seconds, failed) => {
        this.storeLatency.observe({ operation: name }, seconds);
        if (failed) this.storeErrors.inc({ operation: name });
        otelTaskMetrics.storeOperation(name, seconds, failed);
      },
      created: (task) => {
        this.created.inc({ tool: task.name });
        otelTaskMetrics.created(task);
      },
      moved: (task) => {
        if (!isTerminal(task.status)) return;
        const seconds = Math.max(0, task.updatedAt - task.createdAt) / 1000;
        this.finished.inc({ tool: task.name, status: task.status });
        this.duration.observe({ tool: task.name, status: task.status }, seconds);
        otelTaskMetrics.finished(task, seconds);
      },
      expired: (batch) => {
        this.expiredUnread.inc(batch.unread);
        otelTaskMetrics.expiredUnread(batch.unread);
      },
      fetched: () => {
        this.resultsFetched.inc();
        otelTaskMetrics.fetched();
      },
      // OpenTelemetry only: /metrics has the queue's depth (mcp_tasks_queued), not the wait.
      started: (task, now) => otelTaskMetrics.started(task, Math.max(0, now - task.createdAt) / 1000),
    });
  }

  /** Adds the standard `process_*` and `nodejs_*` metrics (CPU, memory, event loop lag). Once per process is enough. */
  includeProcessMetrics(): void {
    if (this.processMetrics) return;
    this.processMetrics = true;
    collectDefaultMetrics({ register: this.registry });
  }

  delivery(outcome: DeliveryOutcome, endpoint: string, _durationMs: number): void {
    this.webhookDeliveries.inc({ outcome, endpoint });
  }

  resultWoken(_task: TaskRecord, ms: number): void {
    this.wakeup.observe(ms / 1000);
    otelTaskMetrics.resultWoken(ms / 1000);
  }

  resultsWaiting(change: 1 | -1): void {
    this.waiting.inc(change);
    otelTaskMetrics.resultsWaiting(change);
  }

  limitRejected(limit: LimitName): void {
    this.rejections.inc({ limit });
    otelTaskMetrics.limitRejected(limit);
  }

  eventEmitted(_woken: number): void {
    this.eventsEmitted.inc();
  }

  waitsWoken(reason: "event" | "timer", count: number): void {
    if (count > 0) this.waitsWokenTotal.inc({ reason }, count);
  }

  leaseLost(task: TaskRecord, action: "requeued" | "failed"): void {
    this.leaseLosses.inc({ tool: task.name, action });
    otelTaskMetrics.leaseLost(task, action);
  }

  /**
   * Stops reading this server's store into the OpenTelemetry gauges (`mcp.tasks.current`,
   * `.queued`, `.queue.depth`). `TaskServer.close` calls it; `/metrics` is unaffected.
   */
  close(): void {
    this.stopObservingStore?.();
    this.stopObservingStore = undefined;
  }
}
