import { metrics, type Counter, type Histogram, type MeterProvider, type UpDownCounter } from "@opentelemetry/api";
import type { TaskRecord } from "../core/task.js";
import { TASK_DURATION_BUCKETS } from "./operation-buckets.js";

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
}

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
  };
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
};
