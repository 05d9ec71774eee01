import type { ServerResponse } from "node:http";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import { wireTaskOf, withRelatedTask } from "../../mcp/rev2025-11-25/wire.js";

const KEEPALIVE_MS = 15_000;

/**
 * The standalone GET stream of a shared session: status changes and progress of the tasks this
 * session created (T-NOTE-1, T-PROG-1), from the cluster's event bus, whichever node runs the work
 * and whichever node the client's GET landed on.
 */
export function openSessionStream(res: ServerResponse, sessionId: string, engine: TaskEngine): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "mcp-session-id": sessionId,
  });
  res.flushHeaders();
  const write = (message: object): void => {
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...message })}\n\n`);
  };
  const onEvent = (event: TaskEvent): void => {
    if (event.type === "status") {
      if (event.sessionId !== sessionId || event.created) return;
      write({ method: "notifications/tasks/status", params: wireTaskOf(event) });
    } else if (event.type === "progress") {
      if (event.sessionId !== sessionId || event.progressToken === null) return;
      write({
        method: "notifications/progress",
        params: withRelatedTask({ progressToken: event.progressToken, ...event.progress }, event.taskId),
      });
    }
  };
  const unsubscribe = engine.bus.onAny(onEvent);
  const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
  keepalive.unref();
  res.once("close", () => {
    unsubscribe();
    clearInterval(keepalive);
  });
}
