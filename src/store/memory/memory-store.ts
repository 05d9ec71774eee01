import { randomBytes } from "node:crypto";
import type { ListPosition } from "../../core/cursor.js";
import { canTransition, isTerminal, type TaskStatus } from "../../core/task-status.js";
import { expiresAt, type InputRequest, type NewTask, type StatusChange, type TaskOutcome, type TaskRecord } from "../../core/task.js";
import {
  checkTransitionPatch,
  compareByCreation,
  compareByExpiry,
  countsFromTotals,
  duplicateInputError,
  duplicateTaskError,
  matchesFilter,
  unknownTaskError,
  wholeLimit,
  zeroStatusCounts,
  claimLostError,
} from "../store-rules.js";
import type { Claim } from "../claim.js";
import type {
  AnnotatePatch,
  ExpiredBatch,
  KeyedCreation,
  OwnerScope,
  RetentionRules,
  StoredKey,
  TaskFilter,
  TaskStore,
  TransitionPatch,
} from "../task-store.js";
import type { TaskKey } from "../../core/idempotency.js";
import type { Checkpoint, CheckpointStore } from "../checkpoint-store.js";
import { memoryStreamEvents } from "./memory-stream-events.js";
import type { ClaimCaps, QueueDepth, RunQueueStore } from "../run-queue.js";
import { fairPick } from "../fair-order.js";
import type { WaitStore } from "../wait-store.js";
import { memoryWaits } from "./memory-waits.js";
import { memoryOutbox } from "./memory-outbox.js";
import type { OutboxStore } from "../outbox-store.js";
import { withPausedCaps, type ToolPause, type ToolPauseStore } from "../tool-pause-store.js";

/**
 * A {@link TaskStore} kept in process memory: for tests, demos and single-process servers that
 * can afford to lose every task on restart. Same semantics as the SQLite store, checked by the
 * same contract suite.
 *
 * Records are deep-copied on the way in and out, so a caller holding a returned record cannot
 * change what other callers see (a durable store gives that for free by serializing).
 */
export function memoryStore(): TaskStore & CheckpointStore & RunQueueStore & WaitStore & OutboxStore & ToolPauseStore {
  // Webhook events, appended by `transition` in the same (synchronous) step as the move.
  const { recordTransition, ...outbox } = memoryOutbox();
  const tasks = new Map<string, TaskRecord>();
  const paused = new Map<string, ToolPause>();
  // Map iteration follows insertion order, which is the tie-break for inputs created in the same ms.
  const inputs = new Map<string, Map<string, InputRequest>>();
  const histories = new Map<string, StatusChange[]>();
  // Per task, in insertion order: the first write of a name wins.
  const steps = new Map<string, Map<string, Checkpoint>>();
  // Tasks per owner, tool and status, kept with every create, status change and delete (the same
  // counts the SQL stores keep in a table), so counting does not walk every task.
  const counts = new Map<string | null, Map<string, Record<TaskStatus, number>>>();
  const recount = (task: Pick<TaskRecord, "owner" | "name" | "status">, delta: 1 | -1): void => {
    let byName = counts.get(task.owner);
    if (byName === undefined) counts.set(task.owner, (byName = new Map()));
    let row = byName.get(task.name);
    if (row === undefined) byName.set(task.name, (row = zeroStatusCounts()));
    row[task.status] += delta;
    if (delta < 0 && Object.values(row).every((n) => n === 0)) {
      byName.delete(task.name);
      if (byName.size === 0) counts.delete(task.owner);
    }
  };
  // Idempotency keys per (owner, key), and the key of each keyed task, which goes with the task.
  const keys = new Map<string, { taskId: string; fingerprint: string }>();
  const keyOfTask = new Map<string, string>();
  const keySlot = (owner: string | null, key: string): string => `${owner === null ? "N" : `O${owner}`}\n${key}`;
  // Tasks whose handler has started (the SQL stores' started_at); the others in `working` are queued.
  const started = new Set<string>();
  // A parked task is in neither set: no handler holds it and it waits to be woken, not claimed.
  const isQueued = (t: TaskRecord): boolean => t.status === "working" && !started.has(t.id) && t.waitMode !== "parked";
  // Tasks whose result was delivered (the SQL stores' fetched_at).
  const fetched = new Set<string>();
  // Ids deleted at their retention, with their owner, in deletion order (oldest first).
  const expiredIds = new Map<string, { owner: string | null; at: number }>();
  let secret: Buffer | null = null;
  let closed = false;

  const open = (): void => {
    if (closed) throw new Error("memory task store is closed");
  };
  const copy = <T>(value: T): T => structuredClone(value);

  const insert = (task: NewTask): TaskRecord => {
    if (tasks.has(task.id)) throw duplicateTaskError(task.id);
    const record: TaskRecord = {
      ...copy(task),
      status: "working", // T-LIFE-1
      statusMessage: null,
      updatedAt: task.createdAt,
      expiresAt: expiresAt(task.createdAt, task.ttlMs),
      outcome: null,
      progress: null,
    };
    tasks.set(record.id, record);
    recount(record, 1);
    histories.set(record.id, [{ status: "working", statusMessage: null, at: record.createdAt }]);
    return copy(record);
  };

  const keepStep = (taskId: string, name: string, value: unknown, now: number): boolean => {
    let kept = steps.get(taskId);
    if (kept === undefined) steps.set(taskId, (kept = new Map()));
    if (kept.has(name)) return false;
    // Through JSON, as the SQL stores keep it: what a re-run gets back is what a restart would give.
    kept.set(name, { name, value: JSON.parse(JSON.stringify(value) ?? "null") as unknown, createdAt: now });
    return true;
  };

  const waits = memoryWaits({
    open,
    task: (id) => tasks.get(id),
    tasks: () => tasks.values(),
    started,
    hasPending: (taskId) => [...(inputs.get(taskId)?.values() ?? [])].some((input) => input.answer === null),
    keepStep,
    step: (taskId, name) => steps.get(taskId)?.get(name)?.value,
    move: (record, to, now) => {
      recount(record, -1);
      record.status = to;
      recount(record, 1);
      record.updatedAt = now;
      histories.get(record.id)?.push({ status: to, statusMessage: record.statusMessage, at: now });
    },
  });

  return {
    ...waits.operations,
    ...outbox,
    async create(task: NewTask): Promise<TaskRecord> {
      open();
      return insert(task);
    },

    async createKeyed(task: NewTask, key: TaskKey): Promise<KeyedCreation> {
      open();
      const slot = keySlot(task.owner, key.key);
      const taken = keys.get(slot);
      const existing = taken && tasks.get(taken.taskId);
      if (taken && existing) return { created: false, task: copy(existing), fingerprint: taken.fingerprint };
      const record = insert(task);
      keys.set(slot, { taskId: record.id, fingerprint: key.fingerprint });
      keyOfTask.set(record.id, slot);
      return { created: true, task: record };
    },

    async findKey(owner: string | null, key: string): Promise<StoredKey | null> {
      open();
      const taken = keys.get(keySlot(owner, key));
      const existing = taken && tasks.get(taken.taskId);
      return taken && existing ? { task: copy(existing), fingerprint: taken.fingerprint } : null;
    },

    async releaseKey(owner: string | null, key: string, taskId: string): Promise<boolean> {
      open();
      const slot = keySlot(owner, key);
      if (keys.get(slot)?.taskId !== taskId) return false;
      keys.delete(slot);
      keyOfTask.delete(taskId);
      return true;
    },

    async get(id: string, scope: OwnerScope): Promise<TaskRecord | null> {
      open();
      const record = tasks.get(id);
      if (record === undefined) return null;
      if (!("any" in scope) && record.owner !== scope.owner) return null;
      return copy(record);
    },

    async list(owner: string | null, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      open();
      const page = [...tasks.values()]
        .filter((t) => t.owner === owner && (after === null || compareByCreation(t, after) > 0))
        .sort(compareByCreation)
        .slice(0, wholeLimit(limit));
      return page.map(copy);
    },

    async search(filter: TaskFilter, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      open();
      const page = [...tasks.values()]
        .filter((t) => matchesFilter(t, filter) && (after === null || compareByCreation(t, after) < 0))
        .sort((a, b) => compareByCreation(b, a))
        .slice(0, wholeLimit(limit));
      return page.map(copy);
    },

    async countByStatus(filter: TaskFilter): Promise<Record<TaskStatus, number>> {
      open();
      const result = zeroStatusCounts();
      if (!countsFromTotals(filter)) {
        for (const t of tasks.values()) if (matchesFilter(t, filter)) result[t.status]++;
        return result;
      }
      const owners =
        "any" in filter.scope ? [...counts.values()] : [counts.get(filter.scope.owner) ?? new Map<string, Record<TaskStatus, number>>()];
      for (const byName of owners) {
        for (const [name, row] of byName) {
          if (filter.name !== undefined && name !== filter.name) continue;
          for (const status of Object.keys(row) as TaskStatus[]) {
            if (filter.statuses === undefined || filter.statuses.includes(status)) result[status] += row[status];
          }
        }
      }
      return result;
    },

    async history(taskId: string): Promise<StatusChange[]> {
      open();
      return copy(histories.get(taskId) ?? []);
    },

    async transition(id: string, from: readonly TaskStatus[], to: TaskStatus, patch: TransitionPatch): Promise<TaskRecord | null> {
      open();
      checkTransitionPatch(to, patch);
      const record = tasks.get(id);
      if (record === undefined) return null;
      // This store hands out no claims (one process runs every task): a claim named here is no
      // task's current one, so the write changes nothing (the Claim contract).
      if (patch.claim !== undefined) return null;
      // Same guard the SQL compare-and-set applies: the caller's `from`, narrowed to the lifecycle table.
      if (!from.includes(record.status) || !canTransition(record.status, to)) return null;
      recount(record, -1);
      record.status = to;
      recount(record, 1);
      // Only a handler asks questions: a task in input_required has started (as in the SQL run queue).
      if (to === "input_required" && record.waitMode !== "parked") started.add(id);
      // A finished task waits for nothing (its registered waits are dropped when they come due).
      if (isTerminal(to)) delete record.waitMode;
      record.updatedAt = patch.now;
      if (patch.statusMessage !== undefined) record.statusMessage = patch.statusMessage;
      if (patch.outcome !== undefined) record.outcome = copy(patch.outcome);
      histories.get(id)?.push({ status: to, statusMessage: record.statusMessage, at: patch.now });
      recordTransition(record);
      return copy(record);
    },

    async annotate(id: string, patch: AnnotatePatch): Promise<boolean> {
      open();
      const record = tasks.get(id);
      if (record === undefined || isTerminal(record.status) || patch.claim !== undefined) return false;
      record.updatedAt = patch.now;
      if (patch.statusMessage !== undefined) record.statusMessage = patch.statusMessage;
      if (patch.progress !== undefined) record.progress = copy(patch.progress);
      if (patch.timeline === true) histories.get(id)?.push({ status: record.status, statusMessage: record.statusMessage, at: patch.now });
      return true;
    },

    async enqueueInput(request: Omit<InputRequest, "answer">, claim?: Claim): Promise<void> {
      open();
      if (claim !== undefined) throw claimLostError(request.taskId);
      if (!tasks.has(request.taskId)) throw unknownTaskError(request.taskId);
      let queue = inputs.get(request.taskId);
      if (queue === undefined) {
        queue = new Map();
        inputs.set(request.taskId, queue);
      }
      if (queue.has(request.id)) throw duplicateInputError(request.taskId, request.id);
      queue.set(request.id, { ...copy(request), answer: null });
    },

    async pendingInputs(taskId: string): Promise<InputRequest[]> {
      open();
      const queue = inputs.get(taskId);
      if (queue === undefined) return [];
      // Array#sort is stable, so equal createdAt keeps insertion order (SQLite: rowid).
      return [...queue.values()]
        .filter((input) => input.answer === null)
        .sort((a, b) => a.createdAt - b.createdAt)
        .map(copy);
    },

    async getInput(taskId: string, inputId: string): Promise<InputRequest | null> {
      open();
      const input = inputs.get(taskId)?.get(inputId);
      return input === undefined ? null : copy(input);
    },

    async inputs(taskId: string): Promise<InputRequest[]> {
      open();
      const queue = inputs.get(taskId);
      if (queue === undefined) return [];
      return [...queue.values()].sort((a, b) => a.createdAt - b.createdAt).map(copy);
    },

    async answerInput(taskId: string, inputId: string, answer: TaskOutcome, claim?: Claim): Promise<boolean> {
      open();
      const input = inputs.get(taskId)?.get(inputId);
      if (input === undefined || input.answer !== null || claim !== undefined) return false;
      input.answer = copy(answer);
      return true;
    },

    async saveCheckpoint(taskId: string, name: string, value: unknown, now: number, claim?: Claim): Promise<boolean> {
      open();
      if (!tasks.has(taskId) || claim !== undefined) return false;
      return keepStep(taskId, name, value, now);
    },

    async checkpoints(taskId: string): Promise<Checkpoint[]> {
      open();
      return [...(steps.get(taskId)?.values() ?? [])].sort((a, b) => a.createdAt - b.createdAt).map(copy);
    },

    async dropCheckpoints(taskId: string): Promise<number> {
      open();
      const n = steps.get(taskId)?.size ?? 0;
      steps.delete(taskId);
      return n;
    },

    async expiredActive(now: number, limit: number): Promise<TaskRecord[]> {
      open();
      return [...tasks.values()]
        .filter((t) => !isTerminal(t.status) && t.expiresAt !== null && t.expiresAt <= now)
        .sort(compareByExpiry)
        .slice(0, wholeLimit(limit))
        .map(copy);
    },

    async deleteExpired(now: number, limit: number, rules: RetentionRules = {}): Promise<ExpiredBatch> {
      open();
      const keep = rules.keepFinishedMs ?? 0;
      const rememberMs = rules.rememberExpiredMs ?? 0;
      const doomed = [...tasks.values()]
        .filter((t) => isTerminal(t.status) && t.expiresAt !== null && t.expiresAt <= now && t.updatedAt <= now - keep)
        .sort(compareByExpiry)
        .slice(0, wholeLimit(limit));
      let unread = 0;
      for (const task of doomed) {
        if (task.status !== "cancelled" && !fetched.has(task.id)) unread++;
        fetched.delete(task.id);
        if (rememberMs > 0 && !expiredIds.has(task.id)) expiredIds.set(task.id, { owner: task.owner, at: now });
        tasks.delete(task.id);
        recount(task, -1);
        inputs.delete(task.id);
        histories.delete(task.id);
        steps.delete(task.id);
        const slot = keyOfTask.get(task.id);
        if (slot !== undefined) keys.delete(slot);
        keyOfTask.delete(task.id);
        started.delete(task.id);
        waits.forget(task.id);
      }
      for (const [id, { at }] of expiredIds) {
        if (at > now - rememberMs) break;
        expiredIds.delete(id);
      }
      return { deleted: doomed.length, unread };
    },

    async wasExpired(id: string, scope: OwnerScope): Promise<boolean> {
      open();
      const expired = expiredIds.get(id);
      return expired !== undefined && ("any" in scope || expired.owner === scope.owner);
    },

    async markFetched(id: string): Promise<boolean> {
      open();
      const task = tasks.get(id);
      if (task === undefined || !isTerminal(task.status) || fetched.has(id)) return false;
      fetched.add(id);
      return true;
    },

    async activeTasks(limit: number): Promise<TaskRecord[]> {
      open();
      return [...tasks.values()]
        .filter((t) => !isTerminal(t.status))
        .sort(compareByCreation)
        .slice(0, wholeLimit(limit))
        .map(copy);
    },

    async countActive(owner: string | null): Promise<number> {
      open();
      let count = 0;
      for (const t of tasks.values()) if (t.owner === owner && !isTerminal(t.status)) count++;
      return count;
    },

    async countStored(owner: string | null): Promise<number> {
      open();
      let count = 0;
      for (const t of tasks.values()) if (t.owner === owner) count++;
      return count;
    },

    async claimRunnable(limit: number, _now: number, caps: ClaimCaps): Promise<TaskRecord[]> {
      open();
      const all = [...tasks.values()];
      // A handler waiting in memory holds its task's start but counts as running for nobody.
      const running = all.filter((t) => started.has(t.id) && !isTerminal(t.status) && t.waitMode !== "memory");
      const picked = fairPick(all.filter(isQueued), running, withPausedCaps(caps, paused.keys()), wholeLimit(limit));
      for (const id of picked) started.add(id);
      return picked.map((id) => copy(tasks.get(id) as TaskRecord));
    },

    async pauseTool(pause: ToolPause): Promise<boolean> {
      open();
      if (paused.has(pause.name)) return false;
      paused.set(pause.name, { ...pause });
      return true;
    },

    async resumeTool(name: string): Promise<boolean> {
      open();
      return paused.delete(name);
    },

    async pausedTools(): Promise<ToolPause[]> {
      open();
      return [...paused.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((pause) => ({ ...pause }));
    },

    async startedTasks(limit: number): Promise<TaskRecord[]> {
      open();
      return [...tasks.values()]
        .filter((t) => !isTerminal(t.status) && started.has(t.id))
        .sort(compareByCreation)
        .slice(0, wholeLimit(limit))
        .map(copy);
    },

    async queuedAhead(taskId: string): Promise<number | null> {
      open();
      const task = tasks.get(taskId);
      if (task === undefined || !isQueued(task)) return null;
      let ahead = 0;
      for (const t of tasks.values()) if (t.owner === task.owner && isQueued(t) && compareByCreation(t, task) < 0) ahead++;
      return ahead;
    },

    async countQueued(owner: string | null): Promise<number> {
      open();
      let n = 0;
      for (const t of tasks.values()) if (t.owner === owner && isQueued(t)) n++;
      return n;
    },

    async queueDepths(): Promise<QueueDepth[]> {
      open();
      const depths = new Map<string, QueueDepth>();
      for (const t of tasks.values()) {
        if (!isQueued(t)) continue;
        const key = JSON.stringify([t.owner, t.name]);
        const depth = depths.get(key) ?? { owner: t.owner, name: t.name, queued: 0 };
        depth.queued++;
        depths.set(key, depth);
      }
      return [...depths.values()];
    },

    async secret(): Promise<Buffer> {
      open();
      secret ??= randomBytes(32);
      return Buffer.from(secret);
    },

    streamEvents: memoryStreamEvents(),

    async close(): Promise<void> {
      closed = true;
    },
  };
}
