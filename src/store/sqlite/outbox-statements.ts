/**
 * The webhook outbox in SQLite: its migration (a table, the disabled URLs, and the trigger that
 * writes a transition's events inside the statement that changes the status) and its statements.
 */
import type { SqliteDatabase as Database } from "./driver.js";
import type { OutboxStore } from "../outbox-store.js";
import { claimedFromRow, deliveryFromRow, EVENT_STATUS_SQL, type OutboxRow } from "../sql/outbox-rows.js";

/**
 * Appended to the schema's migrations. The trigger reads the routes the task's origin keeps
 * (`TaskOrigin.webhooks`); the `instr` test keeps tasks without any from parsing their origin.
 */
export const OUTBOX_MIGRATION = `
  CREATE TABLE webhook_outbox (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    task_id          TEXT NOT NULL,
    url              TEXT NOT NULL,
    endpoint         TEXT NOT NULL,
    type             TEXT NOT NULL,
    status           TEXT NOT NULL,
    status_message   TEXT,
    at               INTEGER NOT NULL,
    owner            TEXT,
    name             TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    ttl_ms           INTEGER,
    poll_interval_ms INTEGER,
    trace            TEXT,
    state            TEXT NOT NULL DEFAULT 'pending',
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    last_status      INTEGER,
    last_error       TEXT,
    last_attempt_at  INTEGER,
    lease_owner      TEXT,
    lease_until      INTEGER,
    lease_generation INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX webhook_outbox_pair ON webhook_outbox (task_id, url, seq) WHERE state = 'pending';
  CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at, seq) WHERE state = 'pending';
  CREATE INDEX webhook_outbox_task ON webhook_outbox (task_id, seq);
  CREATE INDEX webhook_outbox_url ON webhook_outbox (url, seq);
  CREATE TABLE webhook_disabled (
    url    TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at     INTEGER NOT NULL
  );
  CREATE TRIGGER webhook_outbox_moved AFTER UPDATE OF status ON tasks
    WHEN NEW.status IS NOT OLD.status AND NEW.status IN ${EVENT_STATUS_SQL} AND instr(NEW.origin, '"webhooks"') > 0
  BEGIN
    INSERT INTO webhook_outbox (id, task_id, url, endpoint, type, status, status_message, at, owner, name,
                                created_at, ttl_ms, poll_interval_ms, trace, next_attempt_at)
    SELECT 'msg_' || lower(hex(randomblob(16))), NEW.id, json_extract(route.value, '$.url'),
           json_extract(route.value, '$.endpoint'), 'task.' || NEW.status, NEW.status, NEW.status_message,
           NEW.updated_at, NEW.owner, NEW.name, NEW.created_at, NEW.ttl_ms, NEW.poll_interval_ms,
           json_extract(NEW.origin, '$.trace'), NEW.updated_at
    FROM json_each(NEW.origin, '$.webhooks') AS route
    WHERE EXISTS (SELECT 1 FROM json_each(route.value, '$.events') AS wanted WHERE wanted.value = 'task.' || NEW.status)
    ORDER BY route.key;
  END;
  `;

/** `text` as an SQL string literal. */
const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The outbox operations of a SQLite store; `flush` commits the store's pending group first. */
export function sqliteOutbox(db: Database, flush: () => void): OutboxStore {
  const claim = db.prepare<[{ owner: string; now: number; until: number; limit: number; exclude: string }], OutboxRow>(`
    UPDATE webhook_outbox SET lease_owner = @owner, lease_until = @until, lease_generation = lease_generation + 1
    WHERE seq IN (
      SELECT o.seq FROM webhook_outbox o
      WHERE o.state = 'pending' AND o.next_attempt_at <= @now AND (o.lease_owner IS NULL OR o.lease_until <= @now)
        AND NOT EXISTS (SELECT 1 FROM webhook_disabled d WHERE d.url = o.url)
        AND o.url NOT IN (SELECT value FROM json_each(@exclude))
        AND NOT EXISTS (SELECT 1 FROM webhook_outbox p
                        WHERE p.task_id = o.task_id AND p.url = o.url AND p.state = 'pending' AND p.seq < o.seq)
      ORDER BY o.seq LIMIT @limit)
    RETURNING *`);
  const own = db.prepare<[{ owner: string; now: number; until: number; limit: number; skip: string; exclude: string }], OutboxRow>(`
    SELECT o.* FROM webhook_outbox o
    WHERE o.state = 'pending' AND o.lease_owner = @owner AND o.lease_until > @until AND o.next_attempt_at <= @now
      AND o.id NOT IN (SELECT value FROM json_each(@skip))
      AND NOT EXISTS (SELECT 1 FROM webhook_disabled d WHERE d.url = o.url)
      AND o.url NOT IN (SELECT value FROM json_each(@exclude))
      AND NOT EXISTS (SELECT 1 FROM webhook_outbox p
                      WHERE p.task_id = o.task_id AND p.url = o.url AND p.state = 'pending' AND p.seq < o.seq)
    ORDER BY o.seq LIMIT @limit`);
  const settle = db.prepare<
    [
      {
        id: string;
        owner: string;
        generation: number;
        state: string;
        next: number;
        lastStatus: number | null;
        lastError: string | null;
        now: number;
      },
    ]
  >(`
    UPDATE webhook_outbox SET state = @state, attempts = attempts + 1, next_attempt_at = @next, last_status = @lastStatus,
      last_error = @lastError, last_attempt_at = @now, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND lease_owner = @owner AND lease_generation = @generation`);
  const disable = db.prepare<[string, string, number]>(
    `INSERT INTO webhook_disabled (url, reason, at) VALUES (?, ?, ?) ON CONFLICT (url) DO NOTHING`,
  );
  const disabledList = db.prepare<[], { url: string; reason: string; at: number }>(
    `SELECT url, reason, at FROM webhook_disabled ORDER BY at`,
  );
  const list = db.prepare<[{ taskId: string | null; url: string | null; state: string | null; limit: number }], OutboxRow>(`
    SELECT * FROM webhook_outbox
    WHERE (@taskId IS NULL OR task_id = @taskId) AND (@url IS NULL OR url = @url) AND (@state IS NULL OR state = @state)
    ORDER BY seq DESC LIMIT @limit`);
  // By id on the unique index (the OR form above would not use it): a redeliver by id reads one row.
  const listOne = db.prepare<[{ id: string; taskId: string | null; url: string | null; state: string | null }], OutboxRow>(`
    SELECT * FROM webhook_outbox
    WHERE id = @id AND (@taskId IS NULL OR task_id = @taskId) AND (@url IS NULL OR url = @url) AND (@state IS NULL OR state = @state)`);
  const requeueOne = db.prepare<[{ id: string; now: number }]>(`
    UPDATE webhook_outbox SET state = 'pending', attempts = 0, next_attempt_at = @now, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND state <> 'pending'`);
  const requeue = db.prepare<[{ taskId: string | null; url: string | null; state: string; now: number }]>(`
    UPDATE webhook_outbox SET state = 'pending', attempts = 0, next_attempt_at = @now, lease_owner = NULL, lease_until = NULL
    WHERE state = @state AND (@taskId IS NULL OR task_id = @taskId) AND (@url IS NULL OR url = @url)`);
  const urlOf = db.prepare<[string], { url: string }>(`SELECT url FROM webhook_outbox WHERE id = ?`);
  const enable = db.prepare<[string]>(`DELETE FROM webhook_disabled WHERE url = ?`);
  const stats = db.prepare<[], { pending: number; dead: number; oldest: number | null }>(`
    SELECT (SELECT count(*) FROM webhook_outbox WHERE state = 'pending') AS pending,
           (SELECT count(*) FROM webhook_outbox WHERE state = 'dead') AS dead,
           (SELECT min(at) FROM webhook_outbox WHERE state = 'pending') AS oldest`);
  const prune = db.prepare<[number, number]>(`
    DELETE FROM webhook_outbox WHERE seq IN (SELECT seq FROM webhook_outbox WHERE state <> 'pending' AND at < ? ORDER BY seq LIMIT ?)`);

  return {
    keepsOutbox: true,
    leaseWrites(lease) {
      flush();
      db.exec(`DROP TRIGGER IF EXISTS temp.webhook_outbox_leased`);
      if (lease === null) return;
      const { owner, leaseMs } = lease;
      // A temporary trigger: this connection's own, so rows written by other processes on the same
      // file stay unleased (claimable by any sender) — only this process's sender reads these.
      db.exec(`
        CREATE TEMP TRIGGER webhook_outbox_leased AFTER INSERT ON main.webhook_outbox WHEN NEW.lease_owner IS NULL
        BEGIN
          UPDATE webhook_outbox SET lease_owner = ${sqlText(owner)}, lease_until = NEW.at + ${Math.max(0, Math.floor(leaseMs))},
            lease_generation = 1
          WHERE seq = NEW.seq;
        END;`);
    },
    async ownDeliveries(owner, now, until, limit, skipIds, excludeUrls = []) {
      flush();
      return own
        .all({
          owner,
          now,
          until,
          limit: Math.max(0, Math.floor(limit)),
          skip: JSON.stringify(skipIds),
          exclude: JSON.stringify(excludeUrls),
        })
        .map(claimedFromRow);
    },
    async claimDeliveries(owner, now, leaseMs, limit, excludeUrls = []) {
      flush();
      const rows = claim.all({
        owner,
        now,
        until: now + leaseMs,
        limit: Math.max(0, Math.floor(limit)),
        exclude: JSON.stringify(excludeUrls),
      });
      return rows.sort((a, b) => a.seq - b.seq).map(claimedFromRow);
    },
    async settleDelivery(id, lease, result) {
      flush();
      const changes = settle.run({
        id,
        owner: lease.owner,
        generation: lease.generation,
        state: result.state,
        next: result.nextAttemptAt,
        lastStatus: result.lastStatus,
        lastError: result.lastError,
        now: result.now,
      }).changes;
      return changes === 1;
    },
    async disableUrl(url, reason, now) {
      flush();
      disable.run(url, reason, now);
    },
    async disabledUrls() {
      flush();
      return disabledList.all();
    },
    async deliveries(filter, limit) {
      flush();
      const values = { taskId: filter.taskId ?? null, url: filter.url ?? null, state: filter.state ?? null };
      const found =
        filter.id === undefined
          ? list.all({ ...values, limit: Math.max(0, Math.floor(limit)) })
          : listOne.all({ ...values, id: filter.id }).slice(0, Math.max(0, limit));
      return found.map(deliveryFromRow);
    },
    async redeliver(filter, now) {
      flush();
      return db.transaction(() => {
        if (filter.id !== undefined) {
          const changed = requeueOne.run({ id: filter.id, now }).changes;
          const found = urlOf.get(filter.id);
          if (found !== undefined && changed > 0) enable.run(found.url);
          return changed;
        }
        const changed = requeue.run({ taskId: filter.taskId ?? null, url: filter.url ?? null, state: filter.state ?? "dead", now }).changes;
        if (filter.url !== undefined) enable.run(filter.url);
        return changed;
      })();
    },
    async outboxStats() {
      flush();
      const row = stats.get();
      return { pending: row?.pending ?? 0, dead: row?.dead ?? 0, oldestPendingAt: row?.oldest ?? null };
    },
    async pruneDeliveries(before, limit) {
      flush();
      return prune.run(before, Math.max(0, Math.floor(limit))).changes;
    },
  };
}
