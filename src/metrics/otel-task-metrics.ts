import { metrics, type Counter, type Histogram, type MeterProvider, type ObservableGauge, type UpDownCounter } from "@opentelemetry/api";
import type { TaskStatus } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import { RESULT_WAKEUP_BUCKETS, STORE_OPERATION_BUCKETS, TASK_DURATION_BUCKETS } from "./operation-buckets.js";

/** The instrumentation scope of these instruments: the same as the spans' (src/mcp/tracing/tracer.ts). */
const SCOPE = "mcp-tasks";

/** Seconds a task waited in the queue before its handler started (a queue is seconds to minutes deep). */
const QUEUE_WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

interface Instruments {
  created: Counter;
  finished: Counter;
  duration: Histogram;
  queueWait: Histogram;
  expiredUnread: Counter;
  fetched: Counter;
  waiting: UpDownCounter;
  wakeup: Histogram;
  storeOperation: Histogram;
  storeErrors: Counter;
  rejections: Counter;
  leaseLosses: Counter;
  current: ObservableGauge;
  queued: ObservableGauge;
  queueDepth: ObservableGauge;
}

/** Where one server's store-read gauges put what they read at a collection. */
export interface StoreGaugeObserver {
  /** Tasks the store has in an active status (working, input_required). */
  current(status: TaskStatus, tasks: number): void;
  /** Tasks waiting in a single node's queue for a handler, by owner ("" for none) and tool. */
  queued(owner: string, tool: string, tasks: number): void;
  /** Tasks waiting for a cluster worker to claim them. */
  queueDepth(tasks: number): void;
}

/** Reads one server's store into the gauges, at each collection of a metric reader. */
export type StoreGaugeSource = (observe: StoreGaugeObserver) => Promise<void>;

/** Every server of this process whose store the gauges read (one per `TaskMetrics.instrument`). */
const gaugeSources = new Set<StoreGaugeSource>();

let provider: MeterProvider | undefined;
let instruments: Instruments | undefined;

/**
 * The instruments, on whichever meter provider is registered now. Created on first use and again
 * when the provider changes: the API has no proxy meter, so instruments taken from the no-op
 * provider (before an application registers its SDK) would stay no-ops for good.
 */
function otel(): Instruments {
  const current = metrics.getMeterProvider();
  if (instruments && provider === current) return instruments;
  const meter = current.getMeter(SCOPE);
  provider = current;
  instruments = {
    created: meter.createCounter("mcp.tasks.created", { unit: "{task}", description: "Tasks created, by tool." }),
    finished: meter.createCounter("mcp.tasks.finished", {
      unit: "{task}",
      description: "Tasks that reached a terminal status (completed, failed, cancelled), by tool and status.",
    }),
    duration: meter.createHistogram("mcp.tasks.duration", {
      unit: "s",
      description: "Time from a task's creation to its terminal status, by tool and status.",
      advice: { explicitBucketBoundaries: TASK_DURATION_BUCKETS },
    }),
    queueWait: meter.createHistogram("mcp.tasks.queue_wait", {
      unit: "s",
      description: "Time from a task's creation to the start of its handler (its first run), by tool.",
      advice: { explicitBucketBoundaries: QUEUE_WAIT_BUCKETS },
    }),
    expiredUnread: meter.createCounter("mcp.tasks.results.expired_unread", {
      unit: "{task}",
      description: "Finished tasks whose result nobody fetched before their retention ended and the sweeper deleted them.",
    }),
    fetched: meter.createCounter("mcp.tasks.results.fetched", {
      unit: "{task}",
      description: "Finished tasks whose result was delivered to a requestor, counted at the first delivery.",
    }),
    waiting: meter.createUpDownCounter("mcp.tasks.results.waiting", {
      unit: "{request}",
      description: "tasks/result requests this process holds open, waiting for their task to end.",
    }),
    wakeup: meter.createHistogram("mcp.tasks.results.wakeup", {
      unit: "s",
      description: "For a tasks/result that waited: time from the task's terminal status write to the answer.",
      advice: { explicitBucketBoundaries: RESULT_WAKEUP_BUCKETS },
    }),
    storeOperation: meter.createHistogram("mcp.tasks.store.operation.duration", {
      unit: "s",
      description: "Latency of task store operations, by operation.",
      advice: { explicitBucketBoundaries: STORE_OPERATION_BUCKETS },
    }),
    storeErrors: meter.createCounter("mcp.tasks.store.errors", {
      unit: "{operation}",
      description: "Task store operations that failed, by operation.",
    }),
    rejections: meter.createCounter("mcp.tasks.limit_rejections", { unit: "{request}", description: "Refusals by a limit, by limit." }),
    leaseLosses: meter.createCounter("mcp.tasks.lease_losses", {
      unit: "{task}",
      description: "Cluster mode: tasks whose worker stopped renewing its lease, by tool and by what the reaper did (requeued, failed).",
    }),
    current: meter.createObservableGauge("mcp.tasks.current", {
      unit: "{task}",
      description: "Tasks currently working or waiting for input (input_required), as the store has them, by status.",
    }),
    queued: meter.createObservableGauge("mcp.tasks.queued", {
      unit: "{task}",
      description: 'Tasks waiting in the queue for a handler (created, not started), by owner ("" for tasks without one) and tool.',
    }),
    queueDepth: meter.createObservableGauge("mcp.tasks.queue.depth", {
      unit: "{task}",
      description: "Tasks waiting for a worker to claim them (cluster mode).",
    }),
  };
  const { current: currentGauge, queued: queuedGauge, queueDepth: depthGauge } = instruments;
  // One callback for the three, on this provider's instruments: it reads every registered store
  // once per collection. A store that fails to answer (closed, unreachable) is left out of that
  // collection only.
  meter.addBatchObservableCallback(
    async (result) => {
      const observer: StoreGaugeObserver = {
        current: (status, tasks) => result.observe(currentGauge, tasks, { status }),
        queued: (owner, tool, tasks) => result.observe(queuedGauge, tasks, { owner, tool }),
        queueDepth: (tasks) => result.observe(depthGauge, tasks),
      };
      await Promise.all([...gaugeSources].map((source) => source(observer).catch(() => {})));
    },
    [currentGauge, queuedGauge, depthGauge],
  );
  return instruments;
}

/**
 * The task metrics of {@link TaskMetrics} through the OpenTelemetry API (no-ops without an SDK),
 * recorded at the same points as the Prometheus ones. The attributes keep the Prometheus label
 * names (`tool`, `status`), so a collector's Prometheus export of these gives the same series as
 * `/metrics` (`mcp.tasks.created` becomes `mcp_tasks_created_total{tool}`).
 */
export const otelTaskMetrics = {
  created(task: TaskRecord): void {
    otel().created.add(1, { tool: task.name });
  },
  finished(task: TaskRecord, seconds: number): void {
    const { finished, duration } = otel();
    finished.add(1, { tool: task.name, status: task.status });
    duration.record(seconds, { tool: task.name, status: task.status });
  },
  started(task: TaskRecord, seconds: number): void {
    otel().queueWait.record(seconds, { tool: task.name });
  },
  expiredUnread(count: number): void {
    otel().expiredUnread.add(count);
  },
  fetched(): void {
    otel().fetched.add(1);
  },
  resultsWaiting(change: 1 | -1): void {
    otel().waiting.add(change);
  },
  resultWoken(seconds: number): void {
    otel().wakeup.record(seconds);
  },
  storeOperation(operation: string, seconds: number, failed: boolean): void {
    const { storeOperation, storeErrors } = otel();
    storeOperation.record(seconds, { operation });
    if (failed) storeErrors.add(1, { operation });
  },
  limitRejected(limit: string): void {
    otel().rejections.add(1, { limit });
  },
  leaseLost(task: TaskRecord, action: string): void {
    otel().leaseLosses.add(1, { tool: task.name, action });
  },
  /**
   * Reads `source` into the store gauges (`mcp.tasks.current`, `.queued`, `.queue.depth`) at each
   * collection, until the returned function is called. The instruments are made now, on the
   * provider registered now, so a reader that collects before any task event still sees them.
   */
  observeStore(source: StoreGaugeSource): () => void {
    gaugeSources.add(source);
    otel();
    return () => void gaugeSources.delete(source);
  },
};
