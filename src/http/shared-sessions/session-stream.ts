import type { ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { TaskEra } from "../../mcp/era.js";
import { primingEvent, sseEvent, STANDALONE_STREAM, type StreamEventLog } from "../resumable-streams.js";

const KEEPALIVE_MS = 15_000;
/** The bus topic on which a front that resumes a session's GET stream tells the others. */
const RESUMED_TOPIC = "stream-resumed";
/**
 * How long a front goes on storing a session's notifications after its GET stream dropped, so a
 * client resuming (on any front) gets what came meanwhile. Ends early when it resumes anywhere.
 */
export const GET_STREAM_GRACE_MS = 60_000;

function openSse(res: ServerResponse, sessionId: string): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "mcp-session-id": sessionId,
  });
  res.flushHeaders();
}

/**
 * The standalone GET stream of a shared session: status changes and progress of the tasks this
 * session created (T-NOTE-1, T-PROG-1), from the cluster's event bus, whichever node runs the work
 * and whichever node the client's GET landed on. With an event log, it starts with a priming
 * event and its events carry ids; `resumeAfter` (a Last-Event-ID of this stream) first replays
 * what came after it — stored by this front or another, also while the stream was down.
 */
export async function openSessionStream(
  res: ServerResponse,
  sessionId: string,
  { engine, era }: { engine: TaskEngine; era: Pick<TaskEra, "wire"> },
  events?: StreamEventLog,
  resumeAfter?: string,
): Promise<void> {
  const notificationOf = (event: TaskEvent, session: string): JSONRPCMessage | null =>
    era.wire.streamNotificationOf(event, session) as JSONRPCMessage | null;
  if (events && resumeAfter !== undefined) engine.bus.publish({ type: "reply", taskId: RESUMED_TOPIC, message: null, sessionId });
  // Subscribed before the replay reads the store: nothing published meanwhile is missed.
  const live: JSONRPCMessage[] = [];
  let deliver: ((message: JSONRPCMessage) => void) | null = null;
  const unsubscribe = engine.bus.onAny((event) => {
    const message = notificationOf(event, sessionId);
    if (!message) return;
    if (deliver) deliver(message);
    else live.push(message);
  });
  let closed = false;
  const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
  keepalive.unref();
  res.once("close", () => {
    closed = true;
    unsubscribe();
    clearInterval(keepalive);
    if (events) keepStoring(sessionId, engine, events, notificationOf);
  });
  openSse(res, sessionId);
  if (!events) {
    deliver = (message) => res.write(sseEvent(message, undefined));
    live.splice(0).forEach(deliver);
    return;
  }
  // Stored, then written, one at a time: ids on the wire in the order they were issued.
  let queue: Promise<void> = Promise.resolve();
  let after = 0;
  const write = (message: JSONRPCMessage): void => {
    queue = queue
      .then(async () => {
        const id = await events.appendOrLive(sessionId, STANDALONE_STREAM, message);
        if (!closed && (id === null || Number(id) > after)) res.write(sseEvent(message, id ?? undefined));
      })
      .catch((error: unknown) => engine.logger.warn({ err: error }, "could not write a stream event"));
  };
  if (resumeAfter === undefined) {
    // Not stored (a full disk): the stream works, but offers nothing to resume from.
    const primed = await events.appendOrLive(sessionId, STANDALONE_STREAM, {});
    if (primed !== null) res.write(primingEvent(primed, events.retryMs));
  } else {
    const last = await events.replay(sessionId, STANDALONE_STREAM, resumeAfter, (id, message) => {
      if (!closed) res.write(sseEvent(message, id));
    });
    after = Number(last);
  }
  deliver = write;
  live.splice(0).forEach(write);
}

/**
 * After a GET stream dropped: stores the session's notifications for {@link GET_STREAM_GRACE_MS},
 * or until a front announces it resumed the stream, so the resumption replays them.
 */
function keepStoring(
  sessionId: string,
  engine: TaskEngine,
  events: StreamEventLog,
  notificationOf: (event: TaskEvent, sessionId: string) => JSONRPCMessage | null,
): void {
  const unsubscribe = engine.bus.onAny((event) => {
    const message = notificationOf(event, sessionId);
    if (message) void events.append(sessionId, STANDALONE_STREAM, message).catch(() => {});
  });
  const unresumed = engine.bus.onTask(RESUMED_TOPIC, (event) => {
    if (event.type === "reply" && event.sessionId === sessionId) stop();
  });
  const timer = setTimeout(() => stop(), GET_STREAM_GRACE_MS);
  timer.unref();
  function stop(): void {
    clearTimeout(timer);
    unsubscribe();
    unresumed();
  }
}

/** How often a resumed POST stream looks for events its request's server (on any front) stored since. */
const TAIL_POLL_MS = 200;

/**
 * A POST's stream resumed with Last-Event-ID, on whichever front: what its request's server (here
 * or on another front) stored after that id, then what it stores next, until the stream holds the
 * request's response or the client leaves. Ends at once when the response was among the replayed.
 */
export async function resumePostStream(
  res: ServerResponse,
  sessionId: string,
  streamId: string,
  lastEventId: string,
  events: StreamEventLog,
): Promise<void> {
  let closed = false;
  res.once("close", () => (closed = true));
  openSse(res, sessionId);
  let after = lastEventId;
  let answered = false;
  const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
  keepalive.unref();
  try {
    while (!closed && !answered) {
      after = await events.replay(sessionId, streamId, after, (id, message) => {
        if (closed) return;
        res.write(sseEvent(message, id));
        if (isResponse(message)) answered = true;
      });
      if (!answered && !closed) await new Promise((resolve) => setTimeout(resolve, TAIL_POLL_MS));
    }
  } finally {
    clearInterval(keepalive);
  }
  if (!closed) res.end();
}

function isResponse(message: JSONRPCMessage): boolean {
  return !("method" in message) && ("result" in message || "error" in message);
}
