import type { JournalEntry } from "../client/task-journal.js";

/**
 * The journal's record of a task's creation, as the CLI reads it for a command about that task
 * through `target`: the record made through that target if there is one; else the record made
 * through another target — the fronts of one cluster share their tasks, so a task created through
 * one is read through another by its own address. A record from elsewhere counts only if every
 * record of that id agrees on the protocol: ids of unrelated servers may collide (a server that
 * numbers its tasks), and a wrong era is worse than asking the server afresh.
 */
export function creationRecord(entries: readonly JournalEntry[], taskId: string, target: string): JournalEntry | undefined {
  const created = entries.filter((e) => e.op === "created" && e.taskId === taskId);
  const here = created.findLast((e) => e.target === target);
  if (here !== undefined) return here;
  const eras = new Set(created.map((e) => e.protocol ?? ""));
  return eras.size === 1 ? created.at(-1) : undefined;
}

/** The tool each task runs, as the journal knows it, for the tasks listed through `target` (see {@link creationRecord}). */
export function toolsOf(entries: readonly JournalEntry[], taskIds: Iterable<string>, target: string): Map<string, string> {
  const tools = new Map<string, string>();
  for (const taskId of taskIds) {
    const name = creationRecord(entries, taskId, target)?.name;
    if (name !== undefined) tools.set(taskId, name);
  }
  return tools;
}
