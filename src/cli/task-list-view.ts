import type { WireTask } from "../mcp/rev2025-11-25/wire.js";
import type { Output } from "./output.js";
import { renderTable } from "./table.js";

/** The placeholder where something is not known (a task this CLI did not create has no recorded tool). */
const UNKNOWN = "—";

/**
 * `tasks list` for humans: a table, newest first. tasks/list carries Task fields only (T-LIST),
 * no tool; the tool comes from this CLI's journal (`toolOf`), for the tasks its runs created.
 */
export function printTaskTable(out: Output, tasks: readonly WireTask[], toolOf: ReadonlyMap<string, string>, now: number): void {
  if (out.json) {
    out.stdout.write(`${JSON.stringify({ tasks })}\n`);
    return;
  }
  if (tasks.length === 0) {
    out.stderr.write("no tasks\n");
    return;
  }
  const rows = tasks.map((t) => [t.taskId, toolOf.get(t.taskId) ?? UNKNOWN, t.status, age(now - Date.parse(t.createdAt)), t.statusMessage ?? ""]);
  out.stdout.write(renderTable(["id", "tool", "status", "age", "message"], rows));
}

/** Newest first (by createdAt), those with `status` only, at most `limit`. */
export function selectTasks(tasks: readonly WireTask[], filter: { status?: string; limit?: number }): WireTask[] {
  const chosen = tasks.filter((t) => filter.status === undefined || t.status === filter.status).sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  return filter.limit === undefined ? chosen : chosen.slice(0, filter.limit);
}

/** A duration as a person reads an age: the largest unit only (42s, 5m, 3h, 2d). */
export function age(ms: number): string {
  if (!Number.isFinite(ms)) return UNKNOWN;
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
