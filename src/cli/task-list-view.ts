import type { RemoteTaskInfo } from "../mcp/requestor/remote-task-info.js";
import type { Output } from "./output.js";
import { renderTable } from "./table.js";

/** The placeholder where something is not known (a task this CLI did not create has no recorded tool). */
const UNKNOWN = "—";

/**
 * `tasks list` for humans: a table, newest first. tasks/list carries Task fields only (T-LIST),
 * no tool; the tool comes from this CLI's journal (`toolOf`), for the tasks its runs created.
 */
export function printTaskTable(
  out: Output,
  tasks: readonly RemoteTaskInfo[],
  toolOf: ReadonlyMap<string, string>,
  now: number,
  source: ListSource = { kind: "server" },
): void {
  if (out.json) {
    out.stdout.write(`${JSON.stringify({ tasks, source: source.kind })}\n`);
    return;
  }
  if (source.kind === "journal") out.stderr.write(`${source.note}\n`);
  if (tasks.length === 0) {
    out.stderr.write("no tasks\n");
    return;
  }
  const rows = tasks.map((t) => [
    t.taskId,
    toolOf.get(t.taskId) ?? UNKNOWN,
    t.status,
    age(now - Date.parse(t.createdAt)),
    t.statusMessage ?? "",
  ]);
  out.stdout.write(renderTable(["id", "tool", "status", "age", "message"], rows));
}

/** Where a listing comes from: the server's own list, or the tasks this state directory's runs created (its journal), each read from the server. */
export type ListSource = { kind: "server" } | { kind: "journal"; note: string };

/** Newest first (by createdAt), those with `status` only, at most `limit`. */
export function selectTasks(tasks: readonly RemoteTaskInfo[], filter: { status?: string; limit?: number }): RemoteTaskInfo[] {
  const chosen = tasks
    .filter((t) => filter.status === undefined || t.status === filter.status)
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
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
