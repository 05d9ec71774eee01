/**
 * The numbers behind the web view's charts: how many tasks ended per time bucket (by how they
 * ended) and how long the finished ones took, over the viewer's filtered tasks in a time window.
 * Computed from one bounded walk of the store's newest-first search, so it costs at most
 * {@link MAX_SCANNED} rows whatever the store holds.
 */
import { isTerminal, type TaskStatus } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import type { ListPosition } from "../core/cursor.js";
import type { TaskFilter } from "../store/task-store.js";
import type { TaskReadPort } from "../runtime/task-read-port.js";

/** Most tasks one stats request reads; beyond, the answer says `truncated`. */
export const MAX_SCANNED = 5000;
/** The window when the filter names no `from`: the last hour. */
export const DEFAULT_WINDOW_MS = 60 * 60 * 1000;
const BUCKETS = 30;
const PAGE = 500;

type Ended = Extract<TaskStatus, "completed" | "failed" | "cancelled">;

export interface ThroughputBucket {
  start: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface TaskStats {
  from: number;
  to: number;
  bucketMs: number;
  /**
   * Tasks that ended in each bucket (by their last update, which is when they ended), oldest bucket
   * first; those that ended after the window count in the last one, so the buckets add up to the
   * window's finished tasks.
   */
  throughput: ThroughputBucket[];
  /** Run time (creation to end) of the tasks that completed or failed in the window. */
  durations: {
    count: number;
    p50: number | null;
    p90: number | null;
    max: number | null;
    histogram: Array<{ upToMs: number | null; count: number }>;
  };
  /** More tasks matched than one request reads: the numbers cover the newest {@link MAX_SCANNED}. */
  truncated: boolean;
  /** Cluster mode: unclaimed `working` tasks waiting for a worker (all owners); absent otherwise. */
  queueDepth?: number;
  /** Tasks waiting for a handler, per owner and tool, within the viewer's scope; absent for a store that keeps no queue. */
  queued?: Array<{ owner: string | null; tool: string; queued: number }>;
}

/** Upper bounds of the duration histogram's bins (ms); a last bin (upToMs null) holds everything longer. */
const DURATION_BINS = [100, 1000, 10_000, 60_000, 600_000, 3_600_000];

/** Reads the window's tasks (creation time within [from, to)) and sums them up. */
export async function taskStats(store: Pick<TaskReadPort, "search">, filter: TaskFilter, now: number): Promise<TaskStats> {
  const to = filter.createdTo ?? now;
  const from = filter.createdFrom ?? to - DEFAULT_WINDOW_MS;
  const windowed: TaskFilter = { ...filter, createdFrom: from, createdTo: to };
  const bucketMs = Math.max(1000, Math.ceil((to - from) / BUCKETS / 1000) * 1000);
  const throughput: ThroughputBucket[] = [];
  for (let start = from; start < to; start += bucketMs) throughput.push({ start, completed: 0, failed: 0, cancelled: 0 });
  const durations: number[] = [];
  let seen = 0;
  let after: ListPosition | null = null;
  let truncated = false;
  for (;;) {
    // One row past the cap tells whether there were more.
    const want = Math.min(PAGE, MAX_SCANNED + 1 - seen);
    const page: TaskRecord[] = await store.search(windowed, after, want);
    for (const task of page) {
      if (++seen > MAX_SCANNED) {
        truncated = true;
        break;
      }
      if (!isTerminal(task.status)) continue;
      // A task of the window that ended at or after its end (a `to` in the past, or stamped in the
      // request's own millisecond) counts in the last bucket: the chart's total is then the
      // window's finished tasks, what the counters per status count for the same filters.
      const bucket = throughput[Math.min(throughput.length - 1, Math.floor((task.updatedAt - from) / bucketMs))];
      if (bucket) bucket[task.status as Ended]++;
      if (task.status !== "cancelled") durations.push(task.updatedAt - task.createdAt);
    }
    const last = page.at(-1);
    if (truncated || page.length < want || last === undefined) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  durations.sort((a, b) => a - b);
  const at = (q: number): number | null =>
    durations.length === 0 ? null : durations[Math.min(durations.length - 1, Math.floor(q * durations.length))]!;
  const histogram = [...DURATION_BINS, null].map((upToMs, i) => {
    const above = i === 0 ? -1 : DURATION_BINS[i - 1]!;
    return { upToMs, count: durations.filter((d) => d > above && (upToMs === null || d <= upToMs)).length };
  });
  return {
    from,
    to,
    bucketMs,
    throughput,
    durations: { count: durations.length, p50: at(0.5), p90: at(0.9), max: durations.at(-1) ?? null, histogram },
    truncated,
  };
}
