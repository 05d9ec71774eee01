import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type pg from "pg";
import type { Logger } from "../core/logger.js";
import { silentLogger } from "../core/logger.js";
import { storageCondition } from "../core/storage-condition.js";
import type { EventBus, Unsubscribe } from "./event-bus.js";
import { localEventBus } from "./local-event-bus.js";
import type { TaskEvent } from "./task-event.js";

/** The pg driver, loaded on first use: a server on SQLite never pays for loading it at start. */
const requireCjs = createRequire(import.meta.url);
let driver: typeof pg | undefined;
function pgDriver(): typeof pg {
  return (driver ??= requireCjs("pg") as typeof pg);
}

/** Options of {@link pgEventBus}. */
export interface PgEventBusOptions {
  /** PostgreSQL connection string (postgres://…). */
  connectionString: string;
  /** NOTIFY channel; nodes sharing a database and schema must use the same one. Default "mcp_tasks". */
  channel?: string;
  logger?: Logger;
  /** Longest wait between reconnection attempts of the LISTEN connection. Default 5 s. */
  maxReconnectDelayMs?: number;
  /**
   * A table (schema-qualified, with columns `id` identity, `payload` text, `created_at` bigint —
   * the PostgreSQL store's `events`) where an event too large for a NOTIFY payload is written,
   * the NOTIFY carrying only its row id. Without one such an event does not cross nodes.
   */
  overflowTable?: string;
  /**
   * True when the engine's store is the PostgreSQL store on this same database: the bus then lets
   * the store's writes carry the NOTIFYs of creations and outcomes (`notifyFor`), saving their
   * statements. Not for a store elsewhere (its NOTIFYs would go to the wrong database).
   */
  storeOnSameDatabase?: boolean;
}

/**
 * How long events the database would not take are sent again (from 100 ms, doubling to 2 s):
 * about the waiters' backstop re-check, after which they are no longer needed. Past it the
 * events failing to go are dropped, until a batch goes again.
 */
const RESEND_FOR_MS = 30_000;
const FIRST_RESEND_DELAY_MS = 100;
const MAX_RESEND_DELAY_MS = 2_000;

/** How long an overflowed event's row is kept for the other nodes to read it. */
const OVERFLOW_KEEP_MS = 10 * 60_000;

/** PostgreSQL caps NOTIFY payloads below 8000 bytes; free-text fields are cut to stay well under. */
const MAX_MESSAGE_CHARS = 2000;

/**
 * The largest NOTIFY payload PostgreSQL accepts (bytes, with the default 8 kB pages): one byte
 * more and pg_notify fails — and with it every other event of the same batched statement.
 */
export const MAX_NOTIFY_BYTES = 7999;

/** The event as sent to other nodes: free-text fields cut to keep the payload under the limit. */
function shippable(event: TaskEvent): TaskEvent {
  if (event.type === "progress" && event.progress.message !== undefined && event.progress.message.length > MAX_MESSAGE_CHARS) {
    return { ...event, progress: { ...event.progress, message: event.progress.message.slice(0, MAX_MESSAGE_CHARS) } };
  }
  if (event.type === "status" && event.statusMessage !== null && event.statusMessage.length > MAX_MESSAGE_CHARS) {
    return { ...event, statusMessage: event.statusMessage.slice(0, MAX_MESSAGE_CHARS) };
  }
  return event;
}

/**
 * The task id of the `wake` event a {@link pgEventBus} publishes locally whenever its LISTEN is
 * (re-)established: no task has it, so only observers of every event (`onAny`) see it.
 */
export const ANY_TASK = "*";

/** A {@link pgEventBus} with its LISTEN connection's state, for readiness checks and tests. */
export interface PgEventBus extends EventBus {
  readonly nodeId: string;
  /** Resolves once LISTEN is established (the first time). */
  readonly ready: Promise<void>;
  /** True while the LISTEN connection is up (connected, whether or not {@link EventBus.hearOthers} has it listen now). */
  listening(): boolean;
  hearOthers(wanted: boolean): Promise<void>;
}

/**
 * The cluster's event bus on PostgreSQL LISTEN/NOTIFY. Events are delivered locally at once and
 * sent to other nodes through one NOTIFY per event, batched per tick into one statement. A
 * dropped LISTEN connection is re-established with backoff; after every reconnection each local
 * waiter gets a `wake` event, since notifications sent meanwhile are lost.
 */
export function pgEventBus(options: PgEventBusOptions): PgEventBus {
  const channel = options.channel ?? "mcp_tasks";
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid NOTIFY channel name: ${channel}`);
  // Spliced into SQL (a table name cannot be bound): a plain, optionally quoted, schema.table only.
  if (options.overflowTable !== undefined && !/^("?)[a-z_][a-z0-9_]{0,62}\1\.("?)[a-z_][a-z0-9_]{0,62}\2$/.test(options.overflowTable)) {
    throw new Error(`invalid overflow table name: ${options.overflowTable}`);
  }
  const logger = options.logger ?? silentLogger;
  const maxDelay = options.maxReconnectDelayMs ?? 5000;
  const nodeId = randomUUID();
  const local = localEventBus((err) => logger.error({ err }, "event listener failed"));
  const pool = new (pgDriver().Pool)({ connectionString: options.connectionString, max: 2 });
  pool.on("error", (err) => logger.warn({ err }, "event bus pool connection error"));
  const watched = new Map<string, number>();
  /** How every payload this node's publish() sends begins (JSON.stringify keeps key order). */
  const ownPrefix = `{"n":${JSON.stringify(nodeId)},`;

  let outbox: string[] = [];
  /** Events per task in the outbox or in the flush in flight: a NOTIFY sent with a store write must not overtake them. */
  const outgoing = new Map<string, number>();
  let outboxTasks: string[] = [];
  let flushing = false;
  let seq = 0;
  let closed = false;
  let listener: pg.Client | null = null;
  let up = false;
  /** What {@link EventBus.hearOthers} asked for last, and whether the connection now LISTENs. */
  let wanted = true;
  let hearing = false;
  /** LISTEN and UNLISTEN one at a time, each applying whatever was asked for last. */
  let toggling: Promise<void> = Promise.resolve();
  let everUp = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  /** When the flushes began failing on a storage condition (performance.now()), or null while they succeed. */
  let failingSince: number | null = null;
  let retryDelay = 0;
  let retryTimer: NodeJS.Timeout | null = null;

  const flush = async (): Promise<void> => {
    if (flushing || retryTimer !== null || outbox.length === 0 || closed) return;
    flushing = true;
    const batch = outbox;
    const batchTasks = outboxTasks;
    outbox = [];
    outboxTasks = [];
    let sent = true;
    try {
      await pool.query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS t(payload, n) ORDER BY n", [
        channel,
        batch,
      ]);
      failingSince = null;
    } catch (err) {
      // A database that takes no connection for a while (restarting, out of connections, busy):
      // the batch goes again, ahead of what came meanwhile, until it goes or the waiters' backstop
      // re-check would have found the change anyway. Lost wake-ups only delay answers.
      const now = performance.now();
      if (storageCondition(err) !== undefined && !closed && (failingSince === null || now - failingSince < RESEND_FOR_MS)) {
        if (failingSince === null) {
          failingSince = now;
          retryDelay = FIRST_RESEND_DELAY_MS;
        }
        sent = false;
        outbox = [...batch, ...outbox];
        outboxTasks = [...batchTasks, ...outboxTasks];
        logger.warn({ err, events: outbox.length, retryInMs: retryDelay }, "could not send task events to other nodes; sending them again");
        retryTimer = setTimeout(() => {
          retryTimer = null;
          void flush();
        }, retryDelay);
        retryTimer.unref();
        retryDelay = Math.min(retryDelay * 2, MAX_RESEND_DELAY_MS);
      } else {
        logger.warn({ err, dropped: batch.length }, "could not send task events to other nodes");
      }
    } finally {
      if (sent) {
        for (const taskId of batchTasks) {
          const left = (outgoing.get(taskId) ?? 1) - 1;
          if (left <= 0) outgoing.delete(taskId);
          else outgoing.set(taskId, left);
        }
      }
      flushing = false;
      if (outbox.length > 0 && retryTimer === null) setImmediate(() => void flush());
    }
  };

  /**
   * Sends an event too large for NOTIFY through the overflow table: the row and a NOTIFY naming it
   * in one statement (so the row is committed before anyone hears of it), and rows older than
   * {@link OVERFLOW_KEEP_MS} deleted on the way (whoever wrote them may be gone).
   */
  const overflow = async (payload: string, event: TaskEvent): Promise<void> => {
    const table = options.overflowTable!;
    try {
      const now = Date.now();
      await pool.query(
        `WITH stored AS (INSERT INTO ${table} (payload, created_at) VALUES ($1, $2) RETURNING id),
              pruned AS (DELETE FROM ${table} WHERE created_at < $3)
         SELECT pg_notify($4, json_build_object('n', $5::text, 'ref', id)::text) FROM stored`,
        [payload, now, now - OVERFLOW_KEEP_MS, channel, nodeId],
      );
    } catch (err) {
      logger.error({ err, taskId: event.taskId, type: event.type }, "could not send a large task event to other nodes");
    }
  };

  /** Reads an overflowed event another node wrote, and delivers it here. */
  const fetchOverflow = async (ref: unknown): Promise<void> => {
    if (options.overflowTable === undefined || typeof ref !== "number") return;
    try {
      const { rows } = await pool.query<{ payload: string }>(`SELECT payload FROM ${options.overflowTable} WHERE id = $1`, [ref]);
      const event = rows[0] === undefined ? undefined : (JSON.parse(rows[0].payload) as { e?: TaskEvent }).e;
      if (event && typeof event.taskId === "string") local.publish(event);
    } catch (err) {
      logger.warn({ err, ref }, "could not read a large task event sent by another node");
    }
  };

  const connect = async (attempt: number): Promise<void> => {
    if (closed) return;
    const client = new (pgDriver().Client)({ connectionString: options.connectionString });
    client.on("notification", (message) => {
      if (message.channel !== channel || !message.payload) return;
      // Every node hears its own NOTIFYs too: recognised by how publish() starts them, unparsed.
      if (message.payload.startsWith(ownPrefix)) return;
      let parsed: { n?: unknown; e?: TaskEvent; ref?: unknown };
      try {
        parsed = JSON.parse(message.payload) as { n?: unknown; e?: TaskEvent; ref?: unknown };
      } catch {
        return;
      }
      if (parsed.n === nodeId) return;
      if (parsed.ref !== undefined) {
        void fetchOverflow(parsed.ref);
        return;
      }
      if (!parsed.e || typeof parsed.e.taskId !== "string") return;
      local.publish(parsed.e);
    });
    const lost = (err?: unknown): void => {
      if (listener !== client) return;
      listener = null;
      up = false;
      if (closed) return;
      logger.warn({ err }, "LISTEN connection lost; reconnecting");
      void client.end().catch(() => {});
      setTimeout(() => void connect(1), 100).unref();
    };
    client.on("error", lost);
    client.on("end", () => lost());
    // As asked for now; a change meanwhile is applied once this connection is the listener.
    const listens = wanted;
    try {
      await client.connect();
      if (listens) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      void client.end().catch(() => {});
      const delay = Math.min(maxDelay, 100 * 2 ** Math.min(attempt, 10));
      logger.warn({ err, retryInMs: delay }, "cannot LISTEN yet; retrying");
      setTimeout(() => void connect(attempt + 1), delay).unref();
      return;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
    up = true;
    hearing = listens;
    markReady();
    if (hearing !== wanted) void toggle();
    // `listening`: false for a node that asked to hear nothing (a dormant standby): connected, not listening.
    if (everUp) logger.info({ channel, listening: listens }, "LISTEN re-established");
    everUp = true;
    // Whatever was sent while we were away is gone: let every waiter here re-read the store, and
    // nudge observers (a worker pool claims what was queued meanwhile, instead of at its slow
    // safety re-check). Also on the first LISTEN: work queued before it was heard by nobody here.
    wakeAll();
  };

  const wakeAll = (): void => {
    for (const taskId of watched.keys()) local.publish({ type: "wake", taskId });
    local.publish({ type: "wake", taskId: ANY_TASK });
  };

  /** Brings the connection's LISTEN in line with what was asked for last. */
  const toggle = (): Promise<void> => {
    toggling = toggling.then(async () => {
      const client = listener;
      if (client === null || closed || hearing === wanted) return;
      const want = wanted;
      try {
        await client.query(want ? `LISTEN ${channel}` : `UNLISTEN ${channel}`);
      } catch (err) {
        // The connection is going: its replacement LISTENs (or not) as asked for then.
        logger.warn({ err }, want ? "could not LISTEN again" : "could not stop listening");
        return;
      }
      if (listener !== client) return;
      hearing = want;
      logger.debug({ channel, listening: want }, want ? "hearing other nodes' events again" : "not hearing other nodes' events");
      // Whatever was sent while not listening is gone: every waiter here re-reads the store.
      if (want) wakeAll();
      if (hearing !== wanted) void toggle();
    });
    return toggling;
  };
  void connect(0);

  /** The NOTIFY payload of an event, a large outcome left out (then read from the store). */
  const encode = (event: TaskEvent): { payload: string; bytes: number } => {
    let shipped = shippable(event);
    // The sequence number keeps PostgreSQL from folding identical payloads of one transaction.
    let payload = JSON.stringify({ n: nodeId, s: seq++, e: shipped });
    if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES && shipped.type === "status" && shipped.outcome !== undefined) {
      // A large result stays in the store; the waiters it wakes read it from there.
      const { outcome: _dropped, ...rest } = shipped;
      shipped = rest;
      payload = JSON.stringify({ n: nodeId, s: seq++, e: shipped });
    }
    return { payload, bytes: Buffer.byteLength(payload) };
  };

  return {
    nodeId,
    ready,
    listening: () => up,
    ...(options.storeOnSameDatabase === true && {
      notifyFor(event: TaskEvent) {
        if (outgoing.has(event.taskId) || closed) return null;
        const { payload, bytes } = encode(event);
        return bytes > MAX_NOTIFY_BYTES ? null : { channel, payload };
      },
      publishHere: (event: TaskEvent) => local.publish(event),
    }),
    publish(event) {
      local.publish(event);
      const { payload, bytes } = encode(event);
      if (bytes > MAX_NOTIFY_BYTES && options.overflowTable !== undefined) {
        void overflow(payload, event);
        return;
      }
      if (bytes > MAX_NOTIFY_BYTES) {
        // Only a `reply` can be this large (free text is cut, outcomes left out): a requestor's
        // answer to an elicitation or sampling request, POSTed to another node than the one that
        // asked. Without an overflow table it cannot cross nodes; dropped alone, so the batch it
        // would have joined still goes out.
        logger.error(
          { taskId: event.taskId, type: event.type, bytes, limit: MAX_NOTIFY_BYTES },
          "task event too large for PostgreSQL NOTIFY: not sent to other nodes",
        );
        return;
      }
      outbox.push(payload);
      outboxTasks.push(event.taskId);
      outgoing.set(event.taskId, (outgoing.get(event.taskId) ?? 0) + 1);
      if (outbox.length === 1) setImmediate(() => void flush());
    },
    onTask(taskId, fn): Unsubscribe {
      watched.set(taskId, (watched.get(taskId) ?? 0) + 1);
      const off = local.onTask(taskId, fn);
      return () => {
        off();
        const left = (watched.get(taskId) ?? 1) - 1;
        if (left <= 0) watched.delete(taskId);
        else watched.set(taskId, left);
      };
    },
    onAny: (fn) => local.onAny(fn),
    hearOthers(want) {
      wanted = want;
      return toggle();
    },
    async close() {
      if (closed) return;
      if (retryTimer !== null) {
        clearTimeout(retryTimer);
        retryTimer = null;
      }
      await flush();
      closed = true;
      const client = listener;
      listener = null;
      up = false;
      await client?.end().catch(() => {});
      await pool.end().catch(() => {});
      await local.close();
    },
  };
}
