/**
 * The webhook outbox in PostgreSQL: its migration (a table, the disabled URLs, and the row trigger
 * that writes a transition's events inside whichever statement changes the status — the single
 * and batched transitions, the lease reaper's `failExpired`, the sweeps) and its statements.
 */
import type pg from "pg";
import type { ClaimedDelivery, DeliverySettlement, OutboxStore } from "../outbox-store.js";
import { claimedFromRow, deliveryFromRow, EVENT_STATUS_SQL, type OutboxRow } from "../sql/outbox-rows.js";
import { coalescer } from "./coalescer.js";
import { boundLater, statement, type Statement, type Tables } from "./sql.js";

/** The outbox's two tables, in the store's schema. */
function outboxTables(t: Tables): { outbox: string; disabled: string } {
  return { outbox: `${t.schema}.webhook_outbox`, disabled: `${t.schema}.webhook_disabled` };
}

/**
 * Appended to the schema's migrations. The origin is TEXT (schema.ts, "Choices"): it is read as
 * `json` (which accepts what the store wrote, `\u0000` included) only for tasks whose origin
 * names webhooks at all.
 */
export const OUTBOX_MIGRATION = (t: Tables): string => {
  const { outbox, disabled } = outboxTables(t);
  return `
  CREATE TABLE ${outbox} (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT COLLATE "C" NOT NULL UNIQUE,
    task_id          TEXT COLLATE "C" NOT NULL,
    url              TEXT COLLATE "C" NOT NULL,
    endpoint         TEXT NOT NULL,
    type             TEXT NOT NULL,
    status           TEXT NOT NULL,
    status_message   TEXT,
    at               BIGINT NOT NULL,
    owner            TEXT,
    name             TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    ttl_ms           BIGINT,
    poll_interval_ms BIGINT,
    trace            TEXT,
    state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts         INT NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    last_status      INT,
    last_error       TEXT,
    last_attempt_at  BIGINT,
    lease_owner      TEXT,
    lease_until      BIGINT,
    lease_generation BIGINT NOT NULL DEFAULT 0
  );
  CREATE INDEX webhook_outbox_pair ON ${outbox} (task_id, url, seq) WHERE state = 'pending';
  CREATE INDEX webhook_outbox_due ON ${outbox} (next_attempt_at, seq) WHERE state = 'pending';
  CREATE INDEX webhook_outbox_task ON ${outbox} (task_id, seq);
  CREATE INDEX webhook_outbox_url ON ${outbox} (url, seq);
  CREATE TABLE ${disabled} (
    url    TEXT COLLATE "C" PRIMARY KEY,
    reason TEXT NOT NULL,
    at     BIGINT NOT NULL
  );
  CREATE FUNCTION ${t.schema}.webhook_outbox_moved() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO ${outbox} (id, task_id, url, endpoint, type, status, status_message, at, owner, name,
                           created_at, ttl_ms, poll_interval_ms, trace, next_attempt_at)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), NEW.id, route.value->>'url', route.value->>'endpoint',
           'task.' || NEW.status, NEW.status, NEW.status_message, NEW.updated_at, NEW.owner, NEW.name, NEW.created_at,
           NEW.ttl_ms, NEW.poll_interval_ms, (NEW.origin::json->'trace')::text, NEW.updated_at
    FROM json_array_elements(NEW.origin::json->'webhooks') WITH ORDINALITY AS route(value, n)
    WHERE EXISTS (SELECT 1 FROM json_array_elements_text(route.value->'events') AS wanted(type) WHERE wanted.type = 'task.' || NEW.status)
    ORDER BY route.n;
    RETURN NULL;
  END
  $fn$;
  CREATE TRIGGER webhook_outbox_moved AFTER UPDATE OF status ON ${t.tasks}
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ${EVENT_STATUS_SQL} AND strpos(NEW.origin, '"webhooks"') > 0)
    EXECUTE FUNCTION ${t.schema}.webhook_outbox_moved();
  `;
};

/** The session settings that name the writer's sender ({@link OutboxStore.leaseWrites}). */
export const WRITER_OWNER_SETTING = "mcp_tasks.outbox_owner";
export const WRITER_LEASE_SETTING = "mcp_tasks.outbox_lease_ms";

/**
 * Appended after {@link OUTBOX_MIGRATION}: the trigger leases the rows it writes to the sender the
 * writing connection names in its session settings (set by {@link OutboxStore.leaseWrites} on each
 * of the store's connections), so that sender reads them without a claim statement. A connection
 * that names none (another program, an older node) writes them unleased, claimable at once.
 */
export const OUTBOX_LEASED_WRITES_MIGRATION = (t: Tables): string => {
  const { outbox } = outboxTables(t);
  // The origin is parsed once per transition (it was twice).
  return `
  CREATE OR REPLACE FUNCTION ${t.schema}.webhook_outbox_moved() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    origin json := NEW.origin::json;
    sender text := nullif(current_setting('${WRITER_OWNER_SETTING}', true), '');
    lease_ms bigint := CASE WHEN sender IS NULL THEN NULL ELSE nullif(current_setting('${WRITER_LEASE_SETTING}', true), '')::bigint END;
  BEGIN
    IF lease_ms IS NULL THEN sender := NULL; END IF;
    INSERT INTO ${outbox} (id, task_id, url, endpoint, type, status, status_message, at, owner, name,
                           created_at, ttl_ms, poll_interval_ms, trace, next_attempt_at, lease_owner, lease_until, lease_generation)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), NEW.id, route.value->>'url', route.value->>'endpoint',
           'task.' || NEW.status, NEW.status, NEW.status_message, NEW.updated_at, NEW.owner, NEW.name, NEW.created_at,
           NEW.ttl_ms, NEW.poll_interval_ms, (origin->'trace')::text, NEW.updated_at,
           sender, NEW.updated_at + lease_ms, CASE WHEN sender IS NULL THEN 0 ELSE 1 END
    FROM json_array_elements(origin->'webhooks') WITH ORDINALITY AS route(value, n)
    WHERE EXISTS (SELECT 1 FROM json_array_elements_text(route.value->'events') AS wanted(type) WHERE wanted.type = 'task.' || NEW.status)
    ORDER BY route.n;
    RETURN NULL;
  END
  $fn$;
  `;
};

/**
 * Appended after {@link OUTBOX_LEASED_WRITES_MIGRATION}: the same rows, written by a loop over the
 * task's routes with one `VALUES` insert each. The single `INSERT … SELECT` over the routes'
 * JSON (a set-returning function, a sub-select per route for its event types, a sort) cost about
 * as much as the transition it rode on; this form costs about half of that. A route's event types
 * are a JSON array of plain names (webhook-routing.ts writes them), so the quoted name is found
 * in its text.
 */
export const OUTBOX_ROUTE_LOOP_MIGRATION = (t: Tables): string => {
  const { outbox } = outboxTables(t);
  return `
  CREATE OR REPLACE FUNCTION ${t.schema}.webhook_outbox_moved() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    origin json := NEW.origin::json;
    kind text := 'task.' || NEW.status;
    sender text := nullif(current_setting('${WRITER_OWNER_SETTING}', true), '');
    lease_ms bigint := CASE WHEN sender IS NULL THEN NULL ELSE nullif(current_setting('${WRITER_LEASE_SETTING}', true), '')::bigint END;
    route json;
  BEGIN
    IF lease_ms IS NULL THEN sender := NULL; END IF;
    FOR route IN SELECT value FROM json_array_elements(origin->'webhooks') LOOP
      IF strpos((route->'events')::text, '"' || kind || '"') > 0 THEN
        INSERT INTO ${outbox} (id, task_id, url, endpoint, type, status, status_message, at, owner, name,
                               created_at, ttl_ms, poll_interval_ms, trace, next_attempt_at, lease_owner, lease_until, lease_generation)
        VALUES ('msg_' || replace(gen_random_uuid()::text, '-', ''), NEW.id, route->>'url', route->>'endpoint',
                kind, NEW.status, NEW.status_message, NEW.updated_at, NEW.owner, NEW.name, NEW.created_at,
                NEW.ttl_ms, NEW.poll_interval_ms, (origin->'trace')::text, NEW.updated_at,
                sender, NEW.updated_at + lease_ms, CASE WHEN sender IS NULL THEN 0 ELSE 1 END);
      END IF;
    END LOOP;
    RETURN NULL;
  END
  $fn$;
  `;
};

interface OutboxStatements {
  claim: Statement;
  own: Statement;
  settle: Statement;
  settleMany: Statement;
  disable: Statement;
  disabled: Statement;
  list: Statement;
  listOne: Statement;
  requeueOne: Statement;
  requeue: Statement;
  stats: Statement;
  prune: Statement;
}

function outboxStatements(t: Tables): OutboxStatements {
  const { outbox, disabled } = outboxTables(t);
  return {
    // FOR UPDATE SKIP LOCKED: concurrent senders on other nodes take other rows, never wait on these.
    claim: statement(
      "outbox_claim",
      `WITH due AS (
         SELECT o.seq FROM ${outbox} o
         WHERE o.state = 'pending' AND o.next_attempt_at <= $2 AND (o.lease_owner IS NULL OR o.lease_until <= $2)
           AND NOT EXISTS (SELECT 1 FROM ${disabled} d WHERE d.url = o.url)
           AND NOT (o.url = ANY ($5::text[]))
           AND NOT EXISTS (SELECT 1 FROM ${outbox} p
                           WHERE p.task_id = o.task_id AND p.url = o.url AND p.state = 'pending' AND p.seq < o.seq)
         ORDER BY o.seq LIMIT $4
         FOR UPDATE SKIP LOCKED)
       UPDATE ${outbox} o SET lease_owner = $1, lease_until = $2 + $3, lease_generation = o.lease_generation + 1
       FROM due WHERE o.seq = due.seq
       RETURNING o.*`,
    ),
    // Reads only: these rows were leased to $1 when they were written.
    own: statement(
      "outbox_own",
      `SELECT o.* FROM ${outbox} o
       WHERE o.state = 'pending' AND o.next_attempt_at <= $2 AND o.lease_owner = $1 AND o.lease_until > $3
         AND NOT (o.id = ANY ($5::text[]))
         AND NOT EXISTS (SELECT 1 FROM ${disabled} d WHERE d.url = o.url)
         AND NOT (o.url = ANY ($6::text[]))
         AND NOT EXISTS (SELECT 1 FROM ${outbox} p
                         WHERE p.task_id = o.task_id AND p.url = o.url AND p.state = 'pending' AND p.seq < o.seq)
       ORDER BY o.seq LIMIT $4`,
    ),
    settle: statement(
      "outbox_settle",
      `UPDATE ${outbox} SET state = $4, attempts = attempts + 1, next_attempt_at = $5, last_status = $6, last_error = $7,
         last_attempt_at = $8, lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND lease_owner = $2 AND lease_generation = $3
       RETURNING 1 AS settled`,
    ),
    // The same for many rows, each fenced by its own lease. The rows are visited (and locked) in the
    // order of the ids, which the caller sorts, so two such statements of different senders (a
    // lease that ran out and was claimed again) never wait for each other in a circle; were a plan
    // to visit them otherwise, the deadlock would roll one back and it would run again.
    settleMany: statement(
      "outbox_settle_many",
      `WITH v AS (
         SELECT * FROM unnest(${boundLater("$1", "text[]")}, ${boundLater("$2", "text[]")}, ${boundLater("$3", "int8[]")},
                              ${boundLater("$4", "text[]")}, ${boundLater("$5", "int8[]")}, ${boundLater("$6", "int4[]")},
                              ${boundLater("$7", "text[]")}, ${boundLater("$8", "int8[]")})
           AS v(id, owner, generation, state, next_attempt_at, last_status, last_error, now))
       UPDATE ${outbox} o SET state = v.state, attempts = o.attempts + 1, next_attempt_at = v.next_attempt_at,
         last_status = v.last_status, last_error = v.last_error, last_attempt_at = v.now, lease_owner = NULL, lease_until = NULL
       FROM v
       WHERE o.id = v.id AND o.lease_owner = v.owner AND o.lease_generation = v.generation
       RETURNING o.id`,
    ),
    disable: statement("outbox_disable", `INSERT INTO ${disabled} (url, reason, at) VALUES ($1, $2, $3) ON CONFLICT (url) DO NOTHING`),
    disabled: statement("outbox_disabled", `SELECT url, reason, at FROM ${disabled} ORDER BY at`),
    list: statement(
      "outbox_list",
      `SELECT * FROM ${outbox}
       WHERE ($1::text IS NULL OR task_id = $1) AND ($2::text IS NULL OR url = $2) AND ($3::text IS NULL OR state = $3)
       ORDER BY seq DESC LIMIT $4`,
    ),
    // By id on the unique index (a generic plan of the OR form above would not use it).
    listOne: statement(
      "outbox_list_one",
      `SELECT * FROM ${outbox}
       WHERE id = $4 AND ($1::text IS NULL OR task_id = $1) AND ($2::text IS NULL OR url = $2) AND ($3::text IS NULL OR state = $3)`,
    ),
    requeueOne: statement(
      "outbox_requeue_one",
      `WITH moved AS (
         UPDATE ${outbox} SET state = 'pending', attempts = 0, next_attempt_at = $2, lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND state <> 'pending' RETURNING url),
       enabled AS (DELETE FROM ${disabled} WHERE url IN (SELECT url FROM moved))
       SELECT count(*)::int AS n FROM moved`,
    ),
    requeue: statement(
      "outbox_requeue",
      `WITH moved AS (
         UPDATE ${outbox} SET state = 'pending', attempts = 0, next_attempt_at = $4, lease_owner = NULL, lease_until = NULL
         WHERE state = $3 AND ($1::text IS NULL OR task_id = $1) AND ($2::text IS NULL OR url = $2) RETURNING 1),
       enabled AS (DELETE FROM ${disabled} WHERE $2::text IS NOT NULL AND url = $2)
       SELECT count(*)::int AS n FROM moved`,
    ),
    stats: statement(
      "outbox_stats",
      `SELECT (SELECT count(*) FROM ${outbox} WHERE state = 'pending')::int AS pending,
              (SELECT count(*) FROM ${outbox} WHERE state = 'dead')::int AS dead,
              (SELECT min(at) FROM ${outbox} WHERE state = 'pending') AS oldest`,
    ),
    prune: statement(
      "outbox_prune",
      `WITH gone AS (
         DELETE FROM ${outbox} WHERE seq IN (SELECT seq FROM ${outbox} WHERE state <> 'pending' AND at < $1 ORDER BY seq LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
    ),
  };
}

/**
 * How long a settle waits for others to go out with it. Nothing waits on a settle but the next
 * event of the same task for the same URL, so a short wait costs little, and on a busy node it
 * makes one statement of the settles of many deliveries.
 */
const SETTLE_LINGER_MS = 20;

/** One settle, as {@link OutboxStore.settleDelivery} takes it. */
interface Settle {
  id: string;
  lease: ClaimedDelivery["lease"];
  result: DeliverySettlement;
}

/** The outbox operations of a PostgreSQL store, on its statement runner (one transaction each). */
export function postgresOutbox(
  tables: Tables,
  rows: <R extends pg.QueryResultRow>(query: Statement, values: unknown[]) => Promise<R[]>,
  leaseWrites: OutboxStore["leaseWrites"],
): OutboxStore {
  const s = outboxStatements(tables);
  const count = async (query: Statement, values: unknown[]): Promise<number> => (await rows<{ n: number }>(query, values))[0]?.n ?? 0;
  // Every delivery ends in a settle: under load, the settles of the attempts that ended meanwhile
  // go out as one statement (coalescer.ts), as a task's own writes do.
  const settle = coalescer<Settle, boolean>(
    async (calls) => {
      const ids = new Set(calls.map((call) => call.id));
      if (calls.length === 1 || ids.size < calls.length) {
        // One row twice in a batch (not a case a sender makes): one statement each, in order.
        const settled: boolean[] = [];
        for (const { id, lease, result } of calls) {
          const values = [
            id,
            lease.owner,
            lease.generation,
            result.state,
            result.nextAttemptAt,
            result.lastStatus,
            result.lastError,
            result.now,
          ];
          settled.push((await rows(s.settle, values)).length === 1);
        }
        return settled;
      }
      const sorted = [...calls].sort((a, b) => (a.id < b.id ? -1 : 1));
      const column = <T>(pick: (call: Settle) => T): T[] => sorted.map(pick);
      const settled = await rows<{ id: string }>(s.settleMany, [
        column((call) => call.id),
        column((call) => call.lease.owner),
        column((call) => call.lease.generation),
        column((call) => call.result.state),
        column((call) => call.result.nextAttemptAt),
        column((call) => call.result.lastStatus),
        column((call) => call.result.lastError),
        column((call) => call.result.now),
      ]);
      const applied = new Set(settled.map((row) => row.id));
      return calls.map((call) => applied.has(call.id));
    },
    { lingerMs: SETTLE_LINGER_MS },
  );
  return {
    keepsOutbox: true,
    leaseWrites,
    async ownDeliveries(owner, now, until, limit, skipIds, excludeUrls = []) {
      const found = await rows<OutboxRow>(s.own, [owner, now, until, Math.max(0, Math.floor(limit)), [...skipIds], [...excludeUrls]]);
      return found.map(claimedFromRow);
    },
    async claimDeliveries(owner, now, leaseMs, limit, excludeUrls = []) {
      const claimed = await rows<OutboxRow>(s.claim, [owner, now, leaseMs, Math.max(0, Math.floor(limit)), [...excludeUrls]]);
      return claimed.sort((a, b) => Number(a.seq) - Number(b.seq)).map(claimedFromRow);
    },
    settleDelivery: (id, lease, result) => settle({ id, lease, result }),
    async disableUrl(url, reason, now) {
      await rows(s.disable, [url, reason, now]);
    },
    async disabledUrls() {
      return (await rows<{ url: string; reason: string; at: number }>(s.disabled, [])).map((row) => ({ ...row, at: Number(row.at) }));
    },
    async deliveries(filter, limit) {
      const values = [filter.taskId ?? null, filter.url ?? null, filter.state ?? null];
      const found =
        filter.id === undefined
          ? await rows<OutboxRow>(s.list, [...values, Math.max(0, Math.floor(limit))])
          : (await rows<OutboxRow>(s.listOne, [...values, filter.id])).slice(0, Math.max(0, limit));
      return found.map(deliveryFromRow);
    },
    async redeliver(filter, now) {
      if (filter.id !== undefined) return count(s.requeueOne, [filter.id, now]);
      return count(s.requeue, [filter.taskId ?? null, filter.url ?? null, filter.state ?? "dead", now]);
    },
    async outboxStats() {
      const [row] = await rows<{ pending: number; dead: number; oldest: number | null }>(s.stats, []);
      return {
        pending: row?.pending ?? 0,
        dead: row?.dead ?? 0,
        oldestPendingAt: row?.oldest === null || row === undefined ? null : Number(row.oldest),
      };
    },
    async pruneDeliveries(before, limit) {
      return count(s.prune, [before, Math.max(0, Math.floor(limit))]);
    },
  };
}
