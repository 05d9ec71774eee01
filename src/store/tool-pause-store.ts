import type { TaskStore } from "./task-store.js";

/** A tool an operator paused: its new tasks wait in the queue until it is resumed. */
export interface ToolPause {
  /** The tool's name (the task name of its `tools/call` tasks). */
  name: string;
  /** When it was paused (ms since the epoch). */
  pausedAt: number;
  /** Who paused it, as the audit log names them. */
  pausedBy: string;
}

/**
 * Paused tools, kept with the tasks so that a pause survives a restart and every node sharing
 * the store honours it. A claim (the single node's `claimRunnable`, a cluster's `claim`) never
 * takes a queued task of a paused tool; everything else goes on as before: such tasks are created
 * and queued, running ones finish, and a parked task that wakes waits in the queue like a new one.
 * The contract is checked by `src/testing/tool-pause-contract.ts` against every store.
 */
export interface ToolPauseStore {
  /** Pauses a tool; false (nothing written) when it was paused already. */
  pauseTool(pause: ToolPause): Promise<boolean>;
  /** Resumes a tool; false when it was not paused. */
  resumeTool(name: string): Promise<boolean>;
  /** Every paused tool, by name. */
  pausedTools(): Promise<ToolPause[]>;
}

/** Whether a store keeps paused tools ({@link ToolPauseStore}); every store of this package does. */
export function isToolPauseStore(store: TaskStore): store is TaskStore & ToolPauseStore {
  return typeof (store as Partial<ToolPauseStore>).pauseTool === "function";
}

/** The caps of a claim with each paused tool at 0: no task of theirs is taken (the single-node stores' rule). */
export function withPausedCaps<C extends { perName: Readonly<Record<string, number>> }>(caps: C, paused: Iterable<string>): C {
  const names = [...paused];
  if (names.length === 0) return caps;
  const perName = { ...caps.perName };
  for (const name of names) perName[name] = 0;
  return { ...caps, perName };
}
