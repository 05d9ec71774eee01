import type { TaskRecord } from "../../core/task.js";
import { transitionDeliveries } from "../outbox-rules.js";
import type { ClaimedDelivery, DeliveryFilter, OutboxDelivery, OutboxStore } from "../outbox-store.js";

interface Row extends OutboxDelivery {
  leaseOwner: string | null;
  leaseUntil: number;
  generation: number;
}

const matches = (row: OutboxDelivery, filter: DeliveryFilter): boolean =>
  (filter.id === undefined || row.id === filter.id) &&
  (filter.taskId === undefined || row.taskId === filter.taskId) &&
  (filter.url === undefined || row.url === filter.url) &&
  (filter.state === undefined || row.state === filter.state);

/** The memory store's outbox: rows appended by its transition (see {@link MemoryOutbox.recordTransition}). */
export interface MemoryOutbox extends OutboxStore {
  /** Appends the rows of the transition that left `task` as it is; called inside the store's transition. */
  recordTransition(task: TaskRecord): void;
}

/** The oldest pending row of each (task, URL) pair, oldest first: the rows a sender may send. */
function heads(rows: readonly Row[]): Iterable<Row> {
  const first = new Map<string, Row>();
  for (const row of rows) {
    const pair = `${row.taskId}\n${row.url}`;
    if (row.state === "pending" && !first.has(pair)) first.set(pair, row);
  }
  return first.values();
}

export function memoryOutbox(): MemoryOutbox {
  const rows: Row[] = [];
  const disabled = new Map<string, { reason: string; at: number }>();
  let seq = 0;
  let writer: { owner: string; leaseMs: number } | null = null;
  const copy = (row: Row): OutboxDelivery => {
    const { leaseOwner: _owner, leaseUntil: _until, generation: _generation, ...delivery } = row;
    return structuredClone(delivery);
  };
  return {
    keepsOutbox: true,
    recordTransition(task) {
      for (const row of transitionDeliveries(task, () => ++seq)) {
        if (writer === null) rows.push({ ...row, leaseOwner: null, leaseUntil: 0, generation: 0 });
        else rows.push({ ...row, leaseOwner: writer.owner, leaseUntil: row.at + writer.leaseMs, generation: 1 });
      }
    },
    leaseWrites(lease) {
      writer = lease === null ? null : { ...lease };
    },
    async ownDeliveries(owner, now, until, limit, skipIds, excludeUrls = []) {
      const found: ClaimedDelivery[] = [];
      for (const row of heads(rows)) {
        if (found.length >= limit) break;
        if (row.leaseOwner !== owner || row.leaseUntil <= until || row.nextAttemptAt > now) continue;
        if (skipIds.includes(row.id) || disabled.has(row.url) || excludeUrls.includes(row.url)) continue;
        found.push({ ...copy(row), lease: { owner, generation: row.generation } });
      }
      return found;
    },
    async claimDeliveries(owner, now, leaseMs, limit, excludeUrls = []) {
      const claimed: ClaimedDelivery[] = [];
      for (const row of heads(rows)) {
        if (claimed.length >= limit) break;
        if (row.nextAttemptAt > now || (row.leaseOwner !== null && row.leaseUntil > now)) continue;
        if (disabled.has(row.url) || excludeUrls.includes(row.url)) continue;
        row.leaseOwner = owner;
        row.leaseUntil = now + leaseMs;
        row.generation++;
        claimed.push({ ...copy(row), lease: { owner, generation: row.generation } });
      }
      return claimed;
    },
    async settleDelivery(id, lease, result) {
      const row = rows.find((candidate) => candidate.id === id);
      if (row === undefined || row.leaseOwner !== lease.owner || row.generation !== lease.generation) return false;
      row.leaseOwner = null;
      row.leaseUntil = 0;
      row.state = result.state;
      row.attempts++;
      row.nextAttemptAt = result.nextAttemptAt;
      row.lastStatus = result.lastStatus;
      row.lastError = result.lastError;
      row.lastAttemptAt = result.now;
      return true;
    },
    async disableUrl(url, reason, now) {
      if (!disabled.has(url)) disabled.set(url, { reason, at: now });
    },
    async disabledUrls() {
      return [...disabled].map(([url, { reason, at }]) => ({ url, reason, at }));
    },
    async deliveries(filter, limit) {
      return rows
        .filter((row) => matches(row, filter))
        .reverse()
        .slice(0, Math.max(0, limit))
        .map(copy);
    },
    async redeliver(filter, now) {
      let count = 0;
      for (const row of rows) {
        if (filter.id !== undefined ? row.id !== filter.id || row.state === "pending" : !matches(row, { state: "dead", ...filter }))
          continue;
        row.state = "pending";
        row.attempts = 0;
        row.nextAttemptAt = now;
        row.leaseOwner = null;
        disabled.delete(row.url);
        count++;
      }
      if (filter.url !== undefined) disabled.delete(filter.url);
      return count;
    },
    async outboxStats() {
      const pending = rows.filter((row) => row.state === "pending");
      return {
        pending: pending.length,
        dead: rows.filter((row) => row.state === "dead").length,
        oldestPendingAt: pending.length === 0 ? null : Math.min(...pending.map((row) => row.at)),
      };
    },
    async pruneDeliveries(before, limit) {
      let removed = 0;
      for (let index = rows.length - 1; index >= 0 && removed < limit; index--) {
        const row = rows[index];
        if (row !== undefined && row.state !== "pending" && row.at < before) {
          rows.splice(index, 1);
          removed++;
        }
      }
      return removed;
    },
  };
}
