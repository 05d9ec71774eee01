import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { SessionContext, StandaloneStreamOptions } from "../era.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { isLogLevel, type LogThreshold } from "../logging/log-level.js";
import { logMessage } from "../wire/rev2025-11-25/log-message.js";
import { wireTaskOf, withRelatedTask } from "../wire/rev2025-11-25/wire.js";

/** A `tasks/result` of this session waiting on a task, and whether its caller owns that task. */
interface OpenResult {
  requestId: RequestId;
  owner: string | null;
  /** Looked up at the first event that would go to this request, then kept. */
  owned: Promise<boolean> | null;
  /** The task's move to a terminal status while this request was open, kept for {@link SessionLink.announceEnd}. */
  ended: StatusEvent | null;
}

type StatusEvent = Extract<TaskEvent, { type: "status" }>;

/**
 * Carries a task's status changes (T-NOTE-1), progress (T-PROG-1) and log messages (`ctx.log`,
 * at or above the session's `logging/setLevel`) to one connected session.
 *
 * Where they go: on the stream of a `tasks/result` for that task that this session has open,
 * else — for the session that created the task — its standalone stream (on Streamable HTTP the
 * GET stream; the original POST stream closed with the CreateTaskResult). A session that neither
 * created the task nor waits on it hears nothing of it. A server without a standalone stream (one
 * per request, cluster HTTP) has the waiting tasks/result send the task's end itself, just before
 * its answer: after that answer the server is gone.
 *
 * A `tasks/result` is tracked before the engine's first read has told whether its caller may see
 * the task at all (so no event between that read and the wait is missed). Until that request is
 * refused, another principal's task would have its notifications sent here (T-SEC-3): so when the
 * session did not create the task, the caller's ownership is checked before anything is sent.
 */
export class SessionLink {
  /** By task, in the order they came: nearly always one (a small array, not a map of its own per task). */
  private readonly openResults = new Map<string, OpenResult[]>();
  private unsubscribe: (() => void) | null = null;

  /**
   * @param standalone whether this server can send on the session's standalone stream. False for
   * a server that serves a single request of a session whose standalone stream is fed elsewhere
   * (cluster HTTP: the GET stream comes from the bus): it then only carries notifications for the
   * `tasks/result` requests it has open, and skips the rest without building them.
   */
  constructor(
    readonly connectionId: string,
    private readonly server: Server,
    private readonly engine: TaskEngine,
    private readonly logThreshold: LogThreshold,
    private readonly standalone = true,
    private readonly standaloneOpened: () => boolean = () => true,
  ) {}

  attach(): void {
    this.unsubscribe ??= this.engine.bus.onAny((event) => void this.onEvent(event));
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.openResults.clear();
  }

  /** Marks a `tasks/result` request of this session, made by `owner`, as waiting on `taskId`, until {@link untrackResult}. */
  trackResult(taskId: string, requestId: RequestId, owner: string | null): void {
    const open = this.openResults.get(taskId);
    const entry: OpenResult = { requestId, owner, owned: null, ended: null };
    if (!open) return void this.openResults.set(taskId, [entry]);
    // The same request id again replaces the entry, keeping its place.
    const at = open.findIndex((one) => one.requestId === requestId);
    if (at >= 0) open[at] = entry;
    else open.push(entry);
  }

  /** The `tasks/result` of {@link trackResult} is over (answered, refused or abandoned). */
  untrackResult(taskId: string, requestId: RequestId): void {
    const open = this.openResults.get(taskId);
    const at = open?.findIndex((one) => one.requestId === requestId) ?? -1;
    if (at < 0) return;
    open!.splice(at, 1);
    if (open!.length === 0) this.openResults.delete(taskId);
  }

  private async onEvent(event: TaskEvent): Promise<void> {
    if (event.type !== "status" && event.type !== "progress" && event.type !== "log") return;
    // T-NOTE-1 covers status *changes*; a new task's `working` is already in its CreateTaskResult.
    if (event.type === "status" && event.created) return;
    // A shared session's own tasks are notified on its GET stream, fed by the bus on whichever
    // node holds it; carrying them on its tasks/result streams too would deliver each twice (and
    // progress must increase from one notification to the next).
    if (!this.standalone && event.sessionId === this.connectionId) return;
    const open = this.openResults.get(event.taskId);
    if (event.type === "status" && !this.standalone && isTerminal(event.status)) {
      // Sent after the waiters, this would find the request answered and this server closed with
      // its response (there is no standalone stream here to fall back on): the tasks/result itself
      // announces it, before its answer (announceEnd). Noted synchronously, before that answer.
      for (const entry of open ?? []) entry.ended = event;
      return;
    }
    // The session created the task: entitled to hear of it, on its standalone stream once the
    // client opened one (T-NOTE-1 is a MAY: nothing is owed to a stream nobody listens on).
    const creator = this.standalone && event.sessionId === this.connectionId;
    const mine = creator && this.standaloneOpened();
    if (!open && !mine) return;
    // Whether this session may hear of the task is decided by the requests open when the event
    // came: one that has been answered since (a result can outrun its notification) does not
    // take that away.
    if (!creator && !(await this.ownedByAny(event.taskId, [...(open ?? [])]))) return;
    let relatedRequestId = this.openRequestFor(event.taskId);
    if (event.type === "progress") {
      if (event.progressToken === null || (relatedRequestId === undefined && !mine)) return;
      // T-PROG-1 with the original token; T-META-1: related-task _meta. Sent at once: progress
      // must reach a waiting tasks/result stream before that stream carries the result.
      const params = withRelatedTask({ progressToken: event.progressToken, ...event.progress }, event.taskId);
      await this.send({ method: "notifications/progress", params }, relatedRequestId, mine);
      return;
    }
    if (event.type === "log") {
      // Travels as progress does, with the related-task _meta (T-META-1).
      if (relatedRequestId === undefined && !mine) return;
      if (!isLogLevel(event.level) || !this.logThreshold.admits(event.level)) return;
      const message = logMessage(event.level, event.data, event.logger);
      await this.send({ method: message.method, params: withRelatedTask(message.params, event.taskId) }, relatedRequestId, mine);
      return;
    }
    // Status goes after the waiters: a blocked tasks/result answering matters more than a
    // notification, and the SDK's validation of an outgoing notification costs about a millisecond.
    await new Promise((resolve) => setImmediate(resolve));
    relatedRequestId = this.openRequestFor(event.taskId);
    // The request it was for has been answered meanwhile (with the outcome, for an end), and the
    // client never opened its standalone stream: there is nowhere to send it. Sent anyway, the
    // SDK's transport would store it as an event of a stream nobody can resume.
    if (relatedRequestId === undefined && !(this.standalone && this.standaloneOpened())) return;
    if (isTerminal(event.status) && relatedRequestId !== undefined) {
      // The open tasks/result answers with the outcome itself; only the creator's own stream
      // still gets the status.
      if (!mine) return;
      relatedRequestId = undefined;
    }
    // The task as this transition left it, though it may have moved on (or been swept) since
    // (T-NOTE-1); T-NOTE-3: params are the full Task, without related-task metadata.
    const snapshot = wireTaskOf(event);
    await this.send({ method: "notifications/tasks/status", params: { ...snapshot } }, relatedRequestId, mine);
  }

  /**
   * Sends, on the stream of `tasks/result` request `requestId`, the status notification of the
   * task's end it saw while waiting (T-NOTE-1), if this server has no standalone stream to carry
   * it after the answer. Called by that request just before it answers, once its caller was found
   * to own the task (its lookup succeeded), so no ownership check is needed.
   */
  async announceEnd(taskId: string, requestId: RequestId): Promise<void> {
    const ended = this.openResults.get(taskId)?.find((one) => one.requestId === requestId)?.ended;
    if (!ended) return;
    // T-NOTE-3: params are the full Task, without related-task metadata.
    await this.send({ method: "notifications/tasks/status", params: { ...wireTaskOf(ended) } }, requestId, false);
  }

  /**
   * The first `tasks/result` of this session still open for the task. Only asked once the session
   * is known to be entitled to the task's notifications: it created the task, or a request's
   * caller was found to own it (a session serves one principal).
   */
  private openRequestFor(taskId: string): RequestId | undefined {
    return this.openResults.get(taskId)?.[0]?.requestId;
  }

  /** Whether the caller of any of these requests owns the task: the store is asked once per request. */
  private async ownedByAny(taskId: string, entries: OpenResult[]): Promise<boolean> {
    for (const entry of entries) {
      entry.owned ??= this.engine.inspect.task(taskId, { owner: entry.owner }).then(
        (task) => task !== null,
        () => false,
      );
      if (await entry.owned) return true;
    }
    return false;
  }

  private async send(
    notification: { method: string; params: Record<string, unknown> },
    relatedRequestId: RequestId | undefined,
    mine: boolean,
  ): Promise<void> {
    try {
      await this.server.notification(notification as never, relatedRequestId === undefined ? undefined : { relatedRequestId });
    } catch {
      // The tasks/result stream just closed; the creating session still has its own stream.
      if (relatedRequestId !== undefined && mine) await this.server.notification(notification as never).catch(() => {});
    }
  }
}

/** The link of each connected session, for its tasks/result requests to register with. */
const links = new WeakMap<SessionContext, SessionLink>();

/** Starts carrying task notifications to a session (the era's `attachSession`). */
export function attachStatusNotifications(session: SessionContext, options: StandaloneStreamOptions): () => void {
  const link = new SessionLink(
    session.connectionId,
    session.server,
    session.engine,
    session.logThreshold,
    options.standaloneStream,
    options.standaloneStreamOpened,
  );
  links.set(session, link);
  link.attach();
  return () => link.detach();
}

/** The notification link of a connected session. */
export function sessionLinkOf(session: SessionContext): SessionLink {
  const link = links.get(session);
  if (!link) throw new Error("The session's notification link is not attached");
  return link;
}
