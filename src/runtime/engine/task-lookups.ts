import type { Caller } from "../../core/caller.js";
import type { CursorCodec } from "../../core/cursor.js";
import { TaskError } from "../../core/errors.js";
import { isExpired, type TaskRecord } from "../../core/task.js";
import type { TaskStore } from "../../store/task-store.js";
import { isQueueView } from "../../store/run-queue.js";
import type { Logger } from "../../core/logger.js";
import type { CallerLimits, Attempt } from "../limits/caller-limits.js";
import type { TaskTracing } from "../task-tracing.js";

export interface ListPage {
  tasks: TaskRecord[];
  nextCursor?: string;
}

interface LookupDeps {
  store: TaskStore;
  logger: Logger;
  tracing: TaskTracing;
  /** Per-caller limits (T-SEC-4): operation rate, failed lookups. */
  limits: CallerLimits;
  now: () => number;
  keepFinishedMs: number;
  pageSize: number;
  /** Whether a cap can hold a created task back (then reads say where it waits). */
  mayQueue: () => boolean;
  /** Whether a tool is paused (its queued tasks say so). */
  isPaused: (name: string) => boolean;
}

/**
 * The engine's reads of a task for a request: owner-checked, within the caller's limits, audited
 * when they fail; get and list, and the read every other operation starts from.
 */
export class TaskLookups {
  private cursors: CursorCodec | null = null;

  constructor(private readonly deps: LookupDeps) {}

  /** The engine has started: list cursors are signed with the store's secret from now on. */
  open(cursors: CursorCodec): void {
    this.cursors = cursors;
  }

  /** T-GET-1; a foreign, unknown or malformed id is "not found" (T-ERR-1, T-SEC-3). */
  async get(taskId: unknown, caller: Caller): Promise<TaskRecord> {
    return this.lookup({ caller, operation: "get", taskId }, async () => this.withQueuePosition(await this.read(taskId, caller.owner)));
  }

  /** T-LIST: keyset pages of the owner's tasks with an opaque signed cursor; a queued task's statusMessage as {@link get} gives it. */
  async list(cursor: unknown, caller: Caller): Promise<ListPage> {
    return this.lookup({ caller, operation: "list" }, () => this.page(cursor, caller.owner));
  }

  /**
   * The task as `owner` may see it: "not found" when unknown or foreign (T-ERR-1, T-SEC-3),
   * "expired" past its retention (T-ERR-7) — also once swept, while the store remembers the id.
   */
  async read(taskId: unknown, owner: string | null): Promise<TaskRecord> {
    const { store, now, keepFinishedMs, tracing } = this.deps;
    const id = checkTaskId(taskId);
    const task = await store.get(id, { owner });
    if (!task) throw (await store.wasExpired(id, { owner })) ? TaskError.expired() : TaskError.notFound();
    if (isExpired(task, now(), keepFinishedMs)) throw TaskError.expired();
    tracing.taskRead(task);
    return task;
  }

  /**
   * Runs one lookup of a request within its caller's limits (T-SEC-4): refused over the caller's
   * operation rate, and while it cools down after too many failed lookups — a caller bound to
   * nobody before the store is read, one with an owner only when the lookup fails, so it keeps
   * reaching its own tasks (CallerLimits.admitLookup). A failed lookup (unknown, foreign or expired
   * id, bad cursor) is audited (T-SEC-5) and counted against the caller.
   */
  async lookup<T>(attempt: Attempt, run: () => Promise<T>): Promise<T> {
    const { limits, logger } = this.deps;
    limits.admitLookup(attempt);
    limits.admit(attempt);
    try {
      return await run();
    } catch (error) {
      if (error instanceof TaskError && (error.kind === "not_found" || error.kind === "expired" || error.kind === "bad_cursor")) {
        limits.refuseWhileCooling(attempt);
        const { caller, operation, taskId } = attempt;
        logger.info(
          {
            audit: "lookup_denied",
            reason: error.kind,
            taskId: typeof taskId === "string" ? taskId : null,
            owner: caller.owner,
            operation,
            peer: caller.peer ?? null,
          },
          "task lookup failed",
        );
        limits.lookupFailed(attempt);
      }
      throw error;
    }
  }

  /**
   * The task as a get answers it: a task still waiting in the queue says so in its statusMessage,
   * computed now ("queued (3 ahead)": tasks of the same owner that start before it; or that its
   * tool is paused), never stored.
   */
  private async withQueuePosition(task: TaskRecord): Promise<TaskRecord> {
    const { store, mayQueue } = this.deps;
    if (task.status !== "working" || !isQueueView(store) || !mayQueue()) return task;
    const ahead = await store.queuedAhead(task.id);
    if (ahead === null) return task;
    return { ...task, statusMessage: this.deps.isPaused(task.name) ? pausedMessage(task.name) : `queued (${ahead} ahead)` };
  }

  private async page(cursor: unknown, owner: string | null): Promise<ListPage> {
    const { store, now: clock, keepFinishedMs, pageSize } = this.deps;
    const codec = this.requireCursors();
    const after = cursor === undefined || cursor === null ? null : codec.decode(cursor, owner);
    const rows = await store.list(owner, after, pageSize + 1);
    const now = clock();
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    // T-LIST-2: nextCursor whenever more tasks exist.
    const nextCursor = rows.length > pageSize && last ? codec.encode(last, owner) : undefined;
    // Expired rows not yet swept are left out: get() answers "expired" for them (T-LIST-4 holds).
    // A task still waiting in the queue says so as a get says it ("queued (n ahead)"), one at a time.
    const tasks: TaskRecord[] = [];
    for (const task of page) if (!isExpired(task, now, keepFinishedMs)) tasks.push(await this.withQueuePosition(task));
    return nextCursor ? { tasks, nextCursor } : { tasks };
  }

  private requireCursors(): CursorCodec {
    if (!this.cursors) throw new Error("TaskEngine.start() must be awaited before serving requests");
    return this.cursors;
  }
}

/** The statusMessage of a queued task of a paused tool (computed when read, never stored). */
export function pausedMessage(tool: string): string {
  return `queued: the tool ${tool} is paused; it starts once an operator resumes the tool`;
}

/** The taskId of a request, checked for shape (the store lookup decides whether it exists). */
export function checkTaskId(taskId: unknown): string {
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 256) {
    throw TaskError.invalidParams("Invalid taskId: must be a non-empty string");
  }
  return taskId;
}
