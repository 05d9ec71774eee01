import { AsyncLocalStorage } from "node:async_hooks";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/** What a task's SDK callback is told of the `tools/call` that created its task. */
export interface CreatingRequest {
  authInfo: AuthInfo | undefined;
  /** The transport's session id (Streamable HTTP), undefined on stdio. */
  sessionId: string | undefined;
  /** The SDK server the call came on, for the callback's notifications other than progress. */
  server: Server;
}

/**
 * The creating request, carried from the tools/call handler into the task's run. The engine
 * starts a new task with `setImmediate` inside `create`, so the run inherits the async context
 * of the call that created it; a task re-run after a restart has none. Kept in memory only: an
 * access token is never written to the store.
 */
const creating = new AsyncLocalStorage<CreatingRequest>();

/** Runs `create` with `request` as the creating request of any task it starts. */
export function whileCreating<T>(request: CreatingRequest, create: () => T): T {
  return creating.run(request, create);
}

/** The creating request of the task running now, or undefined (recovered after a restart). */
export function creatingRequest(): CreatingRequest | undefined {
  return creating.getStore();
}
