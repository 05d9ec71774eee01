import type { SqliteDatabase as Database } from "./driver.js";
import type { Claim } from "../claim.js";
import { claimLostError, unknownTaskError, wholeLimit } from "../store-rules.js";
import type { EmittedEvent, NewEvent, ParkedCounts, WaitMode, WaitOutcome, WaitRecord, WaitStore, WokenTask } from "../wait-store.js";
import { stepValue, storedOutcome } from "../wait-rules.js";
import type { CheckpointStatements } from "./checkpoint-statements.js";
import type { GroupCommit } from "./group-commit.js";
import { toJson } from "./rows.js";
import { prepareWaitStatements, type EventRow } from "./wait-statements.js";
import { waitFromRow, type WaitRow } from "../sql/wait-rows.js";
import { isTerminal, type TaskStatus } from "../../core/task-status.js";

function eventOutcome(event: EventRow): WaitOutcome {
  return { fired: "event", at: event.created_at, seq: event.seq, payload: JSON.parse(event.payload) as unknown };
}

/**
 * The {@link WaitStore} of the SQLite store. Each operation is one IMMEDIATE transaction, so it is
 * one atomic write across every process sharing the file: the writer lock orders a registration
 * and an emission, and whichever commits second sees the other's row (no lost wake-up), and two
 * callers of {@link WaitStore.fireDue} never satisfy one wait twice (a wait is satisfied by the
 * transaction whose DELETE removed it).
 */
export function sqliteWaits(db: Database, group: GroupCommit, checkpoints: CheckpointStatements): WaitStore {
  const st = prepareWaitStatements(db);

  const keep = (taskId: string, key: string, outcome: WaitOutcome, now: number): void => {
    checkpoints.save.run({ taskId, name: key, value: toJson(storedOutcome(outcome)), createdAt: now });
  };

  /** Satisfies one wait (only if this transaction removes it) and wakes its task; null when nothing to tell. */
  const satisfy = (wait: WaitRow, outcome: WaitOutcome, now: number): WokenTask | null => {
    if (st.remove.run(wait.task_id, wait.key).changes !== 1) return null;
    const task = st.status.get(wait.task_id);
    if (task === undefined || isTerminal(task.status as TaskStatus)) return null;
    keep(wait.task_id, wait.key, outcome, now);
    return { taskId: wait.task_id, parked: st.wakeParked.all(wait.task_id).length === 1 };
  };

  const once = (woken: WokenTask[], one: WokenTask | null): void => {
    if (one !== null && !woken.some((w) => w.taskId === one.taskId)) woken.push(one);
  };

  const register = db.transaction((wait: WaitRecord): WaitOutcome | null => {
    if (st.status.get(wait.taskId) === undefined) throw unknownTaskError(wait.taskId);
    const kept = st.kept.get(wait.taskId, wait.key);
    const done = kept === undefined ? null : stepValue(JSON.parse(kept.value));
    if (done !== null) return done;
    if (wait.kind === "event" && wait.eventName !== null) {
      const event = st.firstMatch.get({ owner: wait.owner, name: wait.eventName, afterSeq: wait.afterSeq, since: wait.since });
      if (event !== undefined) {
        const outcome = eventOutcome(event);
        keep(wait.taskId, wait.key, outcome, event.created_at);
        return outcome;
      }
    }
    st.register.run(wait);
    return null;
  });

  const emitOne = (event: NewEvent): EmittedEvent => {
    const payload = toJson(event.payload);
    const [row] = st.insertEvent.all({ owner: event.owner, name: event.name, payload, createdAt: event.now });
    if (row === undefined) throw new Error("the event was not stored");
    const stored: EventRow = { seq: row.seq, owner: event.owner, name: event.name, payload, created_at: event.now };
    const woken: WokenTask[] = [];
    for (const wait of st.matching.all({ owner: event.owner, name: event.name, seq: row.seq, createdAt: event.now })) {
      once(woken, satisfy(wait, eventOutcome(stored), event.now));
    }
    return { seq: row.seq, woken };
  };

  const emit = db.transaction((events: readonly NewEvent[]): EmittedEvent[] => events.map(emitOne));

  const fire = db.transaction((now: number, limit: number): WokenTask[] => {
    const woken: WokenTask[] = [];
    for (const wait of st.due.all(now, limit)) {
      once(woken, satisfy(wait, { fired: wait.kind === "timer" ? "timer" : "timeout", at: now }, now));
    }
    return woken;
  });

  const setMode = db.transaction((taskId: string, mode: WaitMode | null): boolean => {
    if (mode !== "parked") return st.setMode.run(mode, taskId).changes === 1;
    if (st.park.run({ id: taskId }).changes === 1) return true;
    // Nothing left to wait for: what it waited for came before it parked, so it is queued at once.
    return st.requeue.run(taskId).changes === 1;
  });

  return {
    async registerWait(wait: WaitRecord, claim?: Claim): Promise<WaitOutcome | null> {
      group.flush();
      if (claim !== undefined) throw claimLostError(wait.taskId);
      return register.immediate(wait);
    },

    async waits(taskId: string): Promise<WaitRecord[]> {
      group.flush();
      return st.waits.all(taskId).map(waitFromRow);
    },

    async emitEvent(event: NewEvent): Promise<EmittedEvent> {
      group.flush();
      return emit.immediate([event])[0] as EmittedEvent;
    },

    async emitEvents(events: readonly NewEvent[]): Promise<EmittedEvent[]> {
      group.flush();
      return events.length === 0 ? [] : emit.immediate(events);
    },

    async fireDue(now: number, limit: number): Promise<WokenTask[]> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? [] : fire.immediate(now, n);
    },

    async nextDue(): Promise<number | null> {
      group.flush();
      return st.nextDue.get()?.at ?? null;
    },

    async countDue(now: number): Promise<number> {
      group.flush();
      return st.countDue.get(now)?.n ?? 0;
    },

    async setWaitMode(taskId: string, mode: WaitMode | null, claim?: Claim): Promise<boolean> {
      group.flush();
      // This store hands out no claims: a claim named here is no task's current one.
      if (claim !== undefined) return false;
      return setMode.immediate(taskId, mode);
    },

    async wakeAnswered(taskId: string, now: number): Promise<boolean> {
      group.flush();
      return st.wakeAnswered.run({ id: taskId, now }).changes === 1;
    },

    async waitMode(taskId: string): Promise<WaitMode | null> {
      group.flushFor(taskId);
      return (st.status.get(taskId)?.wait_mode as WaitMode | null | undefined) ?? null;
    },

    async parkedCounts(): Promise<ParkedCounts> {
      group.flush();
      const row = st.parkedCounts.get();
      return { input: row?.input ?? 0, timer: row?.timer ?? 0, event: row?.event ?? 0 };
    },

    async dropEventsBefore(time: number, limit: number): Promise<number> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? 0 : st.dropEvents.run(time, n).changes;
    },
  };
}
