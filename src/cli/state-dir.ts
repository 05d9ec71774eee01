import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where the requestor CLI keeps its state (sessions per target, the task journal):
 * `$MCP_TASKS_STATE_DIR`, else `$XDG_STATE_HOME/mcp-tasks`, else `~/.local/state/mcp-tasks`.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["MCP_TASKS_STATE_DIR"];
  if (explicit) return explicit;
  const xdg = env["XDG_STATE_HOME"];
  return join(xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".local", "state"), "mcp-tasks");
}

/** The task journal in a state directory (T-SEC-5). */
export function journalPath(dir: string): string {
  return join(dir, "journal.jsonl");
}
