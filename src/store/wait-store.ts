import type { TaskStore } from "./task-store.js";
import type { Claim } from "./claim.js";

/**
 * Why a task holds no handler slot while it waits (docs/durable-execution.md, Waiting):
 * - `"memory"`: its handler waits in the process that runs it (a tool that cannot be replayed):
 *   the task keeps its lease in a cluster and is recovered after a crash by its tool's rules, but
 *   counts as running for nobody (`--workers`, per-principal and per-tool caps).
 * - `"parked"`: its handler was unloaded. Nothing runs it anywhere: no lease, not queued, not
 *   recovered at a restart, not handed back at a drain. Woken, it is queued again and any node
 *   replays it from its checkpoints and answers.
 */
export type WaitMode = "memory" | "parked";

/** What a wait waits for besides an answer to a question (questions are the task's input queue). */
export type WaitKind = "timer" | "event";

/** A timer or an event wait of a task, stored until it is satisfied (or its task is deleted). */
export interface WaitRecord {
  taskId: string;
  /**
   * The checkpoint its outcome is stored under once satisfied (the run journal's key of the wait,
   * e.g. `$sleep#1`). Unique per task.
   */
  key: string;
  kind: WaitKind;
  /** The task's owner: an event wakes only waits of its own owner (null: tasks without one). */
  owner: string | null;
  /** The event's name (kind "event"); null for a timer. */
  eventName: string | null;
  /** When a timer fires, or an event wait times out; null: an event wait without a timeout. */
  dueAt: number | null;
  /**
   * Only events stored after this sequence number match (0: any): a run that waits twice for one
   * name passes the sequence of the event its earlier wait consumed, so one event is seen once.
   */
  afterSeq: number;
  /** Only events emitted at or after this time match (the task's creation). */
  since: number;
  createdAt: number;
}

/** An event as stored, for the window in which a wait that starts late still sees it. */
export interface StoredEvent {
  /** Increases with every event stored (per store). */
  seq: number;
  owner: string | null;
  name: string;
  /** JSON. */
  payload: unknown;
  createdAt: number;
}

/**
 * The outcome a satisfied wait leaves as its checkpoint's value (a step's stored form: `{ value }`),
 * so a replayed run gets it back like any step result. `at`: the event's time (`now` of its
 * {@link WaitStore.emitEvent}) for an event, the `now` of the {@link WaitStore.fireDue} that fired
 * it for a timer or a timeout.
 */
export type WaitOutcome =
  { fired: "timer"; at: number } | { fired: "timeout"; at: number } | { fired: "event"; at: number; seq: number; payload: unknown };

/** An event to store (see {@link WaitStore.emitEvent}): its owner, name, JSON payload and time. */
export interface NewEvent {
  owner: string | null;
  name: string;
  payload: unknown;
  now: number;
}

/** What storing one event did: its place in the store's sequence, and the tasks it woke. */
export interface EmittedEvent {
  seq: number;
  woken: WokenTask[];
}

/**
 * A task one write woke (once per task, however many of its waits that write satisfied): `parked`
 * ones were queued again; the others' handlers wait in some process. A finished task is never
 * woken: its waits are dropped when they are satisfied.
 */
export interface WokenTask {
  taskId: string;
  parked: boolean;
}

/**
 * Parked tasks by what they wait for (metrics, the operator's view), each counted once: a task in
 * `input_required` under `input`, else one with a timer under `timer`, else one with an event wait.
 */
export interface ParkedCounts {
  input: number;
  timer: number;
  event: number;
}

/**
 * Durable waits (docs/durable-execution.md): timers, events and the tasks that hold no slot while
 * they wait. Implemented by every store beside {@link CheckpointStore}.
 *
 * The contract (checked by `src/testing/store-contract.ts` against every implementation):
 * - No lost wake-up: {@link registerWait} and {@link emitEvent} meet in one atomic write each, so
 *   an event emitted before its wait was registered (within the event window) satisfies it at
 *   registration, and one emitted after satisfies it at emission.
 * - A satisfied wait writes its {@link WaitOutcome} as the checkpoint `key` (first write wins, as
 *   `saveCheckpoint`), removes the wait and wakes its task, in the same atomic write. Each wait is
 *   satisfied exactly once, across any number of processes sharing the store.
 * - An event wakes only waits whose owner equals the event's owner.
 * - Waits and events go when their task is deleted (expiry sweep); events also at {@link dropEventsBefore}.
 * - A parked task is neither claimed, counted as running, recovered ({@link RunQueueStore.startedTasks},
 *   `activeTasks` still lists it) nor leased; a task in wait mode "memory" is not counted as running.
 */
export interface WaitStore {
  /**
   * Registers a timer or an event wait. An event wait that a stored event already satisfies
   * (owner, name, `seq > afterSeq`, `createdAt >= since`; the oldest such) is satisfied at once
   * instead: its outcome is written and returned, and nothing is registered. With a `claim` that is
   * no longer the task's current one nothing is written and a StoreError "claim_lost" is thrown;
   * for an unknown task, a StoreError "unknown_task".
   * Registering a key already registered keeps the first registration (a replay waits again); a key
   * whose outcome is kept already returns that outcome and registers nothing.
   */
  registerWait(wait: WaitRecord, claim?: Claim): Promise<WaitOutcome | null>;

  /** The task's registered (unsatisfied) waits, oldest first. */
  waits(taskId: string): Promise<WaitRecord[]>;

  /**
   * Stores an event of `owner` and satisfies every registered event wait of that owner and name
   * (their outcome written, each removed, each task woken) in one atomic write.
   */
  emitEvent(event: NewEvent): Promise<EmittedEvent>;

  /**
   * Stores the events in their order, each as {@link emitEvent} does, all in one atomic write
   * (a batch of events from one emitter costs one commit, not one each); answers each one's
   * {@link EmittedEvent} in the same order. A task woken by several of them is told once per event.
   */
  emitEvents(events: readonly NewEvent[]): Promise<EmittedEvent[]>;

  /**
   * Satisfies up to `limit` waits whose `dueAt <= now`, oldest due first — a timer with
   * `{fired: "timer"}`, an event wait with `{fired: "timeout"}` — each exactly once across processes
   * (PostgreSQL: `FOR UPDATE SKIP LOCKED`), and wakes their tasks.
   */
  fireDue(now: number, limit: number): Promise<WokenTask[]>;

  /** The earliest `dueAt` of any registered wait, or null. */
  nextDue(): Promise<number | null>;

  /**
   * Registered waits whose `dueAt <= now`: timers and event timeouts whose time has come that no
   * {@link fireDue} has satisfied yet (metrics: how far the timer loop is behind).
   */
  countDue(now: number): Promise<number>;

  /**
   * Sets (or, with null, clears) the task's wait mode. `"parked"` also drops the task's lease (a
   * cluster) and its started mark (a single node); with a `claim`, only while it is the task's
   * current one (false otherwise). A task that has nothing left to wait for (no registered wait, no
   * unanswered input request: what it waited for came before it parked) is not parked but queued
   * again at once (from `input_required` moved to `working`, as {@link wakeAnswered}), so no
   * wake-up is lost between a wait's registration and the parking; true either way, and its
   * handler may go. Clearing "memory" puts nothing back in the queue: the handler goes on where it
   * runs; clearing "parked" leaves the task queued. Only live tasks; false for a terminal or unknown one.
   */
  setWaitMode(taskId: string, mode: WaitMode | null, claim?: Claim): Promise<boolean>;

  /**
   * Wakes a parked task whose input requests are all answered: `input_required` → `working`,
   * wait mode cleared, queued again (its history records the change) — one atomic write, only
   * if the task is parked, in `input_required`, and has no unanswered input request. Returns
   * whether it woke it.
   */
  wakeAnswered(taskId: string, now: number): Promise<boolean>;

  /** The task's wait mode (null: none, or an unknown task). */
  waitMode(taskId: string): Promise<WaitMode | null>;

  /** Parked tasks by what they wait for: an unanswered question, a timer, an event. */
  parkedCounts(): Promise<ParkedCounts>;

  /** Deletes events stored before `time` (the event window); returns how many. */
  dropEventsBefore(time: number, limit: number): Promise<number>;
}

/** Whether a store keeps durable waits. */
export function isWaitStore(store: TaskStore): store is TaskStore & WaitStore {
  return typeof (store as Partial<WaitStore>).registerWait === "function";
}
