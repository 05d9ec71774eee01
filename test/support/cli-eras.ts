/**
 * The protocol eras the CLI's requestor commands are tested in, one table for every file that
 * runs a case in both (test/e2e/cli-eras*.test.ts): 2025-11-25 forced through MCP_TASKS_PROTOCOL,
 * 2026-07-28 picked by server/discover as a new user gets it (the default); and what those files
 * read of a run's state directory.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Era {
  name: "2025-11-25" | "2026-07-28";
  /** MCP_TASKS_PROTOCOL: forced, or "auto" (server/discover decides: 2026-07-28 against our server). */
  protocol: string;
  /** What a quick call of an optional tool with --task gives: a task (2025: the client decides) or an inline answer (2026: the server does, X-CAP-4). */
  quickTaskCall: "task" | "inline";
  /** Where `tasks list` reads from. */
  listSource: "server" | "journal";
  /**
   * Whether a question left open by a run that exited is asked again at once by a later run.
   * 2025-11-25 puts it on the first run's `tasks/result` stream, and our server hands it to another
   * stream only once that delivery fails, which it does not notice when the requestor just exits.
   */
  reasksOpenQuestion: boolean;
}

export const ERAS: readonly Era[] = [
  { name: "2025-11-25", protocol: "2025-11-25", quickTaskCall: "task", listSource: "server", reasksOpenQuestion: false },
  { name: "2026-07-28", protocol: "auto", quickTaskCall: "inline", listSource: "journal", reasksOpenQuestion: true },
];

/** The ids of the tasks the runs with this state directory created (its journal). */
export function createdIds(stateDir: string): string[] {
  const file = join(stateDir, "journal.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { op: string; taskId: string })
    .filter((e) => e.op === "created")
    .map((e) => e.taskId);
}

/** Waits until a run with this state directory created one more task than `before`, and returns its id. */
export async function nextCreated(stateDir: string, before: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const ids = createdIds(stateDir);
    if (ids.length > before) return ids.at(-1) as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no task was created within 20 s");
}
