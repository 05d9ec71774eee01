import type { TaskRecord } from "../core/task.js";
import type { ClaimCaps } from "./run-queue.js";
import { compareByCreation } from "./store-rules.js";

type Queued = Pick<TaskRecord, "id" | "owner" | "name" | "createdAt">;
type Running = Pick<TaskRecord, "owner" | "name">;

/**
 * The fair order of {@link QueueView} in plain code, for the memory store (the SQL stores write the
 * same rule as one statement): the ids of up to `limit` tasks of `queued` to start next.
 */
export function fairPick(queued: readonly Queued[], running: readonly Running[], caps: ClaimCaps, limit: number): string[] {
  if (limit <= 0) return [];
  const runningOwner = new Map<string | null, number>();
  const runningName = new Map<string, number>();
  for (const task of running) {
    runningOwner.set(task.owner, (runningOwner.get(task.owner) ?? 0) + 1);
    runningName.set(task.name, (runningName.get(task.name) ?? 0) + 1);
  }
  const ownerRank = new Map<string | null, number>();
  const nameRank = new Map<string, number>();
  const scored: Array<{ task: Queued; score: number }> = [];
  for (const task of [...queued].sort(compareByCreation)) {
    const cap = caps.perName[task.name];
    const nameRunning = runningName.get(task.name) ?? 0;
    // A tool already at its cap takes no part, so it does not hold up its owner's other tasks.
    if (cap !== undefined && nameRunning >= cap) continue;
    const rankInOwner = (ownerRank.get(task.owner) ?? 0) + 1;
    ownerRank.set(task.owner, rankInOwner);
    const rankInName = (nameRank.get(task.name) ?? 0) + 1;
    nameRank.set(task.name, rankInName);
    const score = rankInOwner + (runningOwner.get(task.owner) ?? 0);
    if (caps.perOwner !== null && score > caps.perOwner) continue;
    if (cap !== undefined && rankInName + nameRunning > cap) continue;
    scored.push({ task, score });
  }
  scored.sort((a, b) => a.score - b.score || compareByCreation(a.task, b.task));
  return scored.slice(0, limit).map((entry) => entry.task.id);
}
