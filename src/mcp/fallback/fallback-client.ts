import type { TaskServerConfig } from "../task-server-config.js";

/**
 * Whether a client gets the fallback for hosts without tasks (docs/hosts/README.md): task
 * support is on, the fallback is not switched off, and the client declared no task support —
 * 2025-11-25: no `capabilities.tasks` at initialize (the one task declaration a client makes in
 * that revision; its presence, whatever it holds, counts as support); 2026-07-28: no
 * `io.modelcontextprotocol/tasks` extension in this request's envelope.
 */
export function usesFallback(config: Pick<TaskServerConfig, "tasks" | "backgroundAfterMs">, declaresTasks: boolean): boolean {
  return config.tasks && config.backgroundAfterMs !== null && !declaresTasks;
}
