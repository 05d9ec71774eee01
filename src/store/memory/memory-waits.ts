import { isTerminal, type TaskStatus } from "../../core/task-status.js";
import type { TaskRecord } from "../../core/task.js";
import type { Claim } from "../claim.js";
import { claimLostError, unknownTaskError, wholeLimit } from "../store-rules.js";
import type {
  EmittedEvent,
  NewEvent,
  ParkedCounts,
  StoredEvent,
  WaitMode,
  WaitOutcome,
  WaitRecord,
  WaitStore,
  WokenTask,
} from "../wait-store.js";
import { eventMatches, stepValue, storedOutcome } from "../wait-rules.js";

/** What the memory store lends its waits: its task table and the writes a wake-up makes to it. */
interface MemoryWaitDeps {
  open(): void;
  task(id: string): TaskRecord | undefined;
  tasks(): Iterable<TaskRecord>;
  /** The started marks of the run queue: a parked task drops its own, a woken one is queued without. */
  started: Set<string>;
  hasPending(taskId: string): boolean;
  /** `saveCheckpoint` without the claim check: first write wins. */
  keepStep(taskId: string, name: string, value: unknown, now: number): boolean;
  step(taskId: string, name: string): unknown;
  /** A status move with its kept counts and its history entry. */
  move(record: TaskRecord, to: TaskStatus, now: number): void;
}

/**
 * The {@link WaitStore} of the memory store. Every operation runs without an await in between, so
 * each is one atomic write as the contract asks (one process, one event loop).
 */
export function memoryWaits(deps: MemoryWaitDeps): { operations: WaitStore; forget(taskId: string): void } {
  const { open, task, started } = deps;
  // Per task, by key, in registration order.
  const byTask = new Map<string, Map<string, WaitRecord>>();
  const events: StoredEvent[] = [];
  let lastSeq = 0;
  const copy = <T>(value: T): T => structuredClone(value);

  const remove = (wait: WaitRecord): void => {
    const mine = byTask.get(wait.taskId);
    mine?.delete(wait.key);
    if (mine?.size === 0) byTask.delete(wait.taskId);
  };

  /** Queues a parked task again (the run queue claims it); one waiting in memory stays where it is. */
  const wake = (taskId: string): WokenTask | null => {
    const record = task(taskId);
    if (record === undefined || isTerminal(record.status)) return null;
    if (record.waitMode !== "parked") return { taskId, parked: false };
    delete record.waitMode;
    started.delete(taskId);
    return { taskId, parked: true };
  };

  /** Writes the outcome, removes the wait and wakes its task: the one write that satisfies a wait. */
  const satisfy = (wait: WaitRecord, outcome: WaitOutcome, now: number): WokenTask | null => {
    remove(wait);
    if (task(wait.taskId) === undefined) return null;
    deps.keepStep(wait.taskId, wait.key, storedOutcome(outcome), now);
    return wake(wait.taskId);
  };

  const registered = (): WaitRecord[] => [...byTask.values()].flatMap((mine) => [...mine.values()]);

  const emitOne = (event: NewEvent): EmittedEvent => {
    const stored: StoredEvent = {
      seq: ++lastSeq,
      owner: event.owner,
      name: event.name,
      payload: JSON.parse(JSON.stringify(event.payload) ?? "null") as unknown,
      createdAt: event.now,
    };
    events.push(stored);
    const woken: WokenTask[] = [];
    for (const wait of registered().filter((w) => w.kind === "event" && eventMatches(stored, w))) {
      const outcome: WaitOutcome = { fired: "event", at: stored.createdAt, seq: stored.seq, payload: copy(stored.payload) };
      const one = satisfy(wait, outcome, event.now);
      if (one !== null && !woken.some((w) => w.taskId === one.taskId)) woken.push(one);
    }
    return { seq: stored.seq, woken };
  };

  const operations: WaitStore = {
    async registerWait(wait: WaitRecord, claim?: Claim): Promise<WaitOutcome | null> {
      open();
      if (claim !== undefined) throw claimLostError(wait.taskId);
      if (task(wait.taskId) === undefined) throw unknownTaskError(wait.taskId);
      // Satisfied already (a replay waiting again after the wake-up): its outcome stands.
      const done = stepValue(deps.step(wait.taskId, wait.key));
      if (done !== null) return done;
      let mine = byTask.get(wait.taskId);
      if (mine?.has(wait.key)) return null;
      if (wait.kind === "event") {
        const event = events.find((e) => eventMatches(e, wait));
        if (event !== undefined) {
          const outcome: WaitOutcome = { fired: "event", at: event.createdAt, seq: event.seq, payload: copy(event.payload) };
          deps.keepStep(wait.taskId, wait.key, storedOutcome(outcome), event.createdAt);
          return outcome;
        }
      }
      if (mine === undefined) byTask.set(wait.taskId, (mine = new Map()));
      mine.set(wait.key, copy(wait));
      return null;
    },

    async waits(taskId: string): Promise<WaitRecord[]> {
      open();
      return [...(byTask.get(taskId)?.values() ?? [])].sort((a, b) => a.createdAt - b.createdAt).map(copy);
    },

    async emitEvent(event: NewEvent): Promise<EmittedEvent> {
      open();
      return emitOne(event);
    },

    async emitEvents(batch: readonly NewEvent[]): Promise<EmittedEvent[]> {
      open();
      return batch.map(emitOne);
    },

    async fireDue(now: number, limit: number): Promise<WokenTask[]> {
      open();
      const due = registered()
        .filter((w) => w.dueAt !== null && w.dueAt <= now)
        .sort((a, b) => (a.dueAt as number) - (b.dueAt as number) || a.createdAt - b.createdAt)
        .slice(0, wholeLimit(limit));
      const woken: WokenTask[] = [];
      for (const wait of due) {
        const one = satisfy(wait, { fired: wait.kind === "timer" ? "timer" : "timeout", at: now }, now);
        if (one !== null && !woken.some((w) => w.taskId === one.taskId)) woken.push(one);
      }
      return woken;
    },

    async nextDue(): Promise<number | null> {
      open();
      let next: number | null = null;
      for (const wait of registered()) if (wait.dueAt !== null && (next === null || wait.dueAt < next)) next = wait.dueAt;
      return next;
    },

    async countDue(now: number): Promise<number> {
      open();
      return registered().filter((wait) => wait.dueAt !== null && wait.dueAt <= now).length;
    },

    async setWaitMode(taskId: string, mode: WaitMode | null, claim?: Claim): Promise<boolean> {
      open();
      const record = task(taskId);
      if (record === undefined || isTerminal(record.status) || claim !== undefined) return false;
      if (mode === null) {
        // A parked task without its mode is queued (it holds no start), as a woken one.
        delete record.waitMode;
        return true;
      }
      if (mode === "memory") {
        record.waitMode = "memory";
        return true;
      }
      started.delete(taskId);
      if (byTask.has(taskId) || deps.hasPending(taskId)) {
        record.waitMode = "parked";
        return true;
      }
      // What it waited for came before it parked: it is queued again at once (no lost wake-up).
      delete record.waitMode;
      if (record.status === "input_required") deps.move(record, "working", record.updatedAt);
      return true;
    },

    async wakeAnswered(taskId: string, now: number): Promise<boolean> {
      open();
      const record = task(taskId);
      if (record?.waitMode !== "parked" || record.status !== "input_required" || deps.hasPending(taskId)) return false;
      delete record.waitMode;
      started.delete(taskId);
      deps.move(record, "working", now);
      return true;
    },

    async waitMode(taskId: string): Promise<WaitMode | null> {
      open();
      return task(taskId)?.waitMode ?? null;
    },

    async parkedCounts(): Promise<ParkedCounts> {
      open();
      // Each parked task counts once: a question first, then a timer, then an event.
      const counts: ParkedCounts = { input: 0, timer: 0, event: 0 };
      for (const record of deps.tasks()) {
        if (record.waitMode !== "parked") continue;
        const mine = [...(byTask.get(record.id)?.values() ?? [])];
        if (record.status === "input_required") counts.input++;
        else if (mine.some((w) => w.kind === "timer")) counts.timer++;
        else if (mine.length > 0) counts.event++;
      }
      return counts;
    },

    async dropEventsBefore(time: number, limit: number): Promise<number> {
      open();
      const doomed = new Set(
        events
          .filter((e) => e.createdAt < time)
          .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
          .slice(0, wholeLimit(limit)),
      );
      const kept = events.filter((e) => !doomed.has(e));
      events.splice(0, events.length, ...kept);
      return doomed.size;
    },
  };

  return { operations, forget: (taskId) => byTask.delete(taskId) };
}
