import { waitFromRow, type WaitRow } from "../sql/wait-rows.js";
import type { Claim } from "../claim.js";
import { claimLostError, ownerKey, unknownTaskError, wholeLimit } from "../store-rules.js";
import type { EmittedEvent, NewEvent, ParkedCounts, WaitMode, WaitOutcome, WaitRecord, WaitStore, WokenTask } from "../wait-store.js";
import { stepValue, storedOutcome } from "../wait-rules.js";
import { toJson } from "./rows.js";
import type { Statement, Tables } from "./sql.js";
import { waitStatements } from "./wait-statements.js";

/** Advisory lock class of the (owner, event name) locks ("mctw"), apart from the migration lock's. */
const WAIT_LOCK_CLASS = 0x6d637477;

/** Runs a statement and answers its rows. */
export type Query = <R>(statement: Statement, values: unknown[]) => Promise<R[]>;

interface PostgresWaitDeps {
  /** One statement, its own transaction. */
  rows: Query;
  /** `work` in one transaction on one connection (retried whole after a deadlock or serialization failure). */
  transaction<T>(work: (query: Query) => Promise<T>): Promise<T>;
}

/** A claim as the fence parameters of a statement (owner, generation); nulls for a write that names none. */
function fence(claim: Claim | undefined): [string | null, number | null] {
  return claim === undefined ? [null, null] : [claim.workerId, claim.generation];
}

/**
 * The {@link WaitStore} of the PostgreSQL store, shared by every node of a cluster.
 *
 * - A registration of an event wait and an emission take one transaction-scoped advisory lock
 *   per (owner, name) before they read, so whichever commits second sees the other's row: no
 *   wake-up is lost, and two emitters of one name satisfy each wait once.
 * - {@link WaitStore.fireDue} is one statement that takes due waits `FOR UPDATE SKIP LOCKED`:
 *   any number of nodes fire each wait once, without waiting for each other.
 * - Parking locks the task's row before it reads what the task waits for, and every statement
 *   that satisfies a wait locks its task's row, so a wait satisfied while its task parks is seen
 *   by one of the two.
 */
export function postgresWaits(t: Tables, deps: PostgresWaitDeps): WaitStore {
  const st = waitStatements(t);
  const { rows, transaction } = deps;
  const count = async (query: Statement, values: unknown[]): Promise<number> =>
    Number((await rows<{ n: number }>(query, values))[0]?.n ?? 0);

  /** Stores one event and satisfies its waits, in the caller's transaction (its name's lock held). */
  const emitOne = async (query: Query, event: NewEvent): Promise<EmittedEvent> => {
    const owner = ownerKey(event.owner);
    const payload = toJson(event.payload);
    const [row] = await query<{ seq: number }>(st.insertEvent, [event.owner, owner, event.name, payload, event.now]);
    if (row === undefined) throw new Error("the event was not stored");
    const outcome: WaitOutcome = { fired: "event", at: event.now, seq: row.seq, payload: JSON.parse(payload) };
    const woken = await query<{ task_id: string; parked: boolean }>(st.satisfyEvent, [
      owner,
      event.name,
      row.seq,
      event.now,
      toJson(storedOutcome(outcome)),
    ]);
    return { seq: row.seq, woken: woken.map((w) => ({ taskId: w.task_id, parked: w.parked })) };
  };

  /**
   * The (owner, name) locks of a batch, each once, in one order (owner key, then name) whatever the
   * batch's order, so two batches naming the same events never wait for each other in a cycle.
   */
  const lockNames = async (query: Query, events: readonly NewEvent[]): Promise<void> => {
    const names = [...new Map(events.map((e) => [`${ownerKey(e.owner)}\u0000${e.name}`, [ownerKey(e.owner), e.name] as const])).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, pair]) => pair);
    for (const [owner, name] of names) await query(st.lockName, [WAIT_LOCK_CLASS, owner, name]);
  };

  return {
    async registerWait(wait: WaitRecord, claim?: Claim): Promise<WaitOutcome | null> {
      const owner = ownerKey(wait.owner);
      return transaction(async (query) => {
        // The name's lock before anything is read (and before the task's row: an emission takes
        // them in this order too).
        if (wait.kind === "event" && wait.eventName !== null) await query(st.lockName, [WAIT_LOCK_CLASS, owner, wait.eventName]);
        const [task] = await query<{ held: boolean }>(st.held, [wait.taskId, ...fence(claim)]);
        if (task === undefined) throw unknownTaskError(wait.taskId);
        if (!task.held) throw claimLostError(wait.taskId);
        const [kept] = await query<{ value: string }>(st.kept, [wait.taskId, wait.key]);
        const done = kept === undefined ? null : stepValue(JSON.parse(kept.value));
        if (done !== null) return done;
        if (wait.kind === "event" && wait.eventName !== null) {
          const [event] = await query<{ seq: number; payload: string; created_at: number }>(st.firstMatch, [
            owner,
            wait.eventName,
            wait.afterSeq,
            wait.since,
          ]);
          if (event !== undefined) {
            const outcome: WaitOutcome = { fired: "event", at: event.created_at, seq: event.seq, payload: JSON.parse(event.payload) };
            await query(st.keep, [wait.taskId, wait.key, toJson(storedOutcome(outcome)), event.created_at]);
            return outcome;
          }
        }
        await query(st.register, [
          wait.taskId,
          wait.key,
          wait.kind,
          wait.owner,
          owner,
          wait.eventName,
          wait.dueAt,
          wait.afterSeq,
          wait.since,
          wait.createdAt,
        ]);
        return null;
      });
    },

    async waits(taskId: string): Promise<WaitRecord[]> {
      return (await rows<WaitRow>(st.waits, [taskId])).map(waitFromRow);
    },

    async emitEvent(event: NewEvent): Promise<EmittedEvent> {
      return transaction(async (query) => {
        await query(st.lockName, [WAIT_LOCK_CLASS, ownerKey(event.owner), event.name]);
        return emitOne(query, event);
      });
    },

    async emitEvents(events: readonly NewEvent[]): Promise<EmittedEvent[]> {
      if (events.length === 0) return [];
      return transaction(async (query) => {
        await lockNames(query, events);
        const emitted: EmittedEvent[] = [];
        for (const event of events) emitted.push(await emitOne(query, event));
        return emitted;
      });
    },

    async fireDue(now: number, limit: number): Promise<WokenTask[]> {
      const n = wholeLimit(limit);
      if (n === 0) return [];
      const woken = await rows<{ task_id: string; parked: boolean }>(st.fireDue, [
        now,
        n,
        toJson(storedOutcome({ fired: "timer", at: now })),
        toJson(storedOutcome({ fired: "timeout", at: now })),
      ]);
      return woken.map((w) => ({ taskId: w.task_id, parked: w.parked }));
    },

    async nextDue(): Promise<number | null> {
      const [row] = await rows<{ at: number | null }>(st.nextDue, []);
      return row?.at ?? null;
    },

    async countDue(now: number): Promise<number> {
      return count(st.countDue, [now]);
    },

    async setWaitMode(taskId: string, mode: WaitMode | null, claim?: Claim): Promise<boolean> {
      if (mode !== "parked") return (await rows<{ id: string }>(st.setMode, [taskId, mode, ...fence(claim)])).length === 1;
      return transaction(async (query) => {
        await query(st.lockTask, [taskId]);
        const [row] = await query<{ n: number }>(st.park, [taskId, ...fence(claim)]);
        return Number(row?.n ?? 0) === 1;
      });
    },

    async wakeAnswered(taskId: string, now: number): Promise<boolean> {
      return (await count(st.wakeAnswered, [taskId, now])) === 1;
    },

    async waitMode(taskId: string): Promise<WaitMode | null> {
      const [row] = await rows<{ wait_mode: WaitMode | null }>(st.waitMode, [taskId]);
      return row?.wait_mode ?? null;
    },

    async parkedCounts(): Promise<ParkedCounts> {
      const [row] = await rows<{ input: number; timer: number; event: number }>(st.parkedCounts, []);
      return { input: Number(row?.input ?? 0), timer: Number(row?.timer ?? 0), event: Number(row?.event ?? 0) };
    },

    async dropEventsBefore(time: number, limit: number): Promise<number> {
      const n = wholeLimit(limit);
      if (n === 0) return 0;
      return count(st.dropEvents, [time, n]);
    },
  };
}
