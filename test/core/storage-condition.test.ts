/**
 * The storage-condition classifier over the errors node-postgres really throws when the database
 * goes away — each one obtained here for real (a closed port, a backend terminated from another
 * connection, a socket that never answers, a client ended under a query), not written by hand:
 * the driver's words and fields are what the classifier must read.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RpcCode, toRpcError } from "../../src/core/errors.js";
import { storageCondition } from "../../src/core/storage-condition.js";
import { freePort } from "../support/free-port.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A TCP server on a free port that does `onSocket` with each connection. */
async function listener(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    onSocket(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

async function thrown(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("expected the action to fail");
}

/** A query on `client` in flight while its backend is terminated by pg_terminate_backend from another connection. */
async function terminatedUnder(client: pg.ClientBase): Promise<unknown> {
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const running = thrown(() => client.query("SELECT pg_sleep(10)"));
  const killer = new pg.Client({ connectionString: TEST_PG_URL });
  await killer.connect();
  try {
    // Wait until the sleep is really running, so the termination hits the query, not an idle client.
    for (;;) {
      const active = await killer.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [rows[0]!.pid]);
      if (active.rowCount === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await killer.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
  } finally {
    await killer.end();
  }
  return running;
}

const unreachable = { reason: "store_unreachable", retryable: true };

describe("storageCondition: every connection-level failure of node-postgres is the store being unreachable", () => {
  it("a closed port (ECONNREFUSED)", async () => {
    const port = await freePort();
    const error = await thrown(() => new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` }).connect());
    expect((error as { code?: unknown }).code).toBe("ECONNREFUSED");
    expect(storageCondition(error)).toMatchObject(unreachable);
  });

  it("a query whose backend is terminated (57P01 terminating connection due to administrator command)", async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    client.on("error", () => {});
    await client.connect();
    const error = await terminatedUnder(client);
    expect(error).toMatchObject({ code: "57P01" });
    expect(storageCondition(error)).toMatchObject(unreachable);
    await client.end().catch(() => {});
  });

  it("the next query on a client whose connection dropped ('Connection terminated unexpectedly' or 'not queryable', no SQLSTATE)", async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    client.on("error", () => {});
    await client.connect();
    await terminatedUnder(client);
    const error = await thrown(() => client.query("SELECT 1"));
    // Which of the two depends on whether the driver had seen the socket close yet.
    expect((error as Error).message).toMatch(
      /^(Connection terminated unexpectedly|Client has encountered a connection error and is not queryable)$/,
    );
    expect((error as { code?: unknown }).code).toBeUndefined();
    expect(storageCondition(error)).toMatchObject(unreachable);
  });

  it("a connection cut under a query in flight ('Connection terminated unexpectedly')", async () => {
    // A proxy that forwards to PostgreSQL and destroys both sockets once the query has gone out.
    let cut = (): void => {};
    const port = await listener((socket) => {
      const target = new URL(TEST_PG_URL);
      const upstream = connect(Number(target.port || 5432), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => {});
      upstream.on("error", () => {});
      cut = () => {
        upstream.destroy();
        socket.destroy();
      };
    });
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    client.on("error", () => {});
    await client.connect();
    const running = thrown(() => client.query("SELECT pg_sleep(10)"));
    await new Promise((resolve) => setTimeout(resolve, 100));
    cut();
    const error = await running;
    expect(error).toMatchObject({ message: "Connection terminated unexpectedly" });
    expect(storageCondition(error)).toMatchObject(unreachable);
  });

  it("a server that accepts and never answers (pg's connection timeout)", async () => {
    const port = await listener(() => {});
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/test`, connectionTimeoutMillis: 200 });
    const error = await thrown(() => pool.query("SELECT 1"));
    expect(error).toMatchObject({ message: "Connection terminated due to connection timeout" });
    expect(storageCondition(error)).toMatchObject(unreachable);
    await pool.end();
  });

  it("a pool whose every connection is busy past connectionTimeoutMillis ('timeout exceeded when trying to connect')", async () => {
    const pool = new pg.Pool({ connectionString: TEST_PG_URL, max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    try {
      const error = await thrown(() => pool.query("SELECT 1"));
      expect(error).toMatchObject({ message: "timeout exceeded when trying to connect" });
      expect(storageCondition(error)).toMatchObject(unreachable);
    } finally {
      held.release();
      await pool.end();
    }
  });

  it("a server that closes the socket at once ('Connection terminated unexpectedly' while connecting)", async () => {
    const port = await listener((socket) => socket.destroy());
    const error = await thrown(() => new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` }).connect());
    expect(storageCondition(error)).toMatchObject(unreachable);
  });

  it("a client ended under a query, and queried after it ended", async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    const running = thrown(() => client.query("SELECT pg_sleep(10)"));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await client.end();
    const underEnd = await running;
    expect(storageCondition(underEnd)).toMatchObject(unreachable);
    const afterEnd = await thrown(() => client.query("SELECT 1"));
    expect(afterEnd).toMatchObject({ message: "Client was closed and is not queryable" });
    expect(storageCondition(afterEnd)).toMatchObject(unreachable);
  });

  it("Node's errno names for a network that fails, and SQLSTATE 57P02, 57P03 and class 08", () => {
    for (const code of [
      "ECONNRESET",
      "EPIPE",
      "ETIMEDOUT",
      "EHOSTUNREACH",
      "ENETUNREACH",
      "57P02",
      "57P03",
      "08000",
      "08003",
      "08006",
      "08001",
      "08P01",
    ]) {
      expect(storageCondition(Object.assign(new Error(code), { code })), code).toMatchObject(unreachable);
    }
  });

  it("is answered with the retryable -32003, never -32603 Internal error", async () => {
    const port = await freePort();
    const refused = await thrown(() => new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` }).connect());
    const dropped = Object.assign(new Error("Connection terminated unexpectedly"));
    for (const error of [refused, dropped]) {
      expect(toRpcError(error).body).toMatchObject({ code: RpcCode.Unavailable, data: { reason: "store_unreachable" } });
    }
  });
});

describe("storageCondition: what is not the store being unreachable", () => {
  it("a SQL error with a SQLSTATE of another class (42601 syntax error), even one that says 'Connection terminated'", async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    try {
      const error = await thrown(() => client.query("SELEC 1"));
      expect(error).toMatchObject({ code: "42601" });
      expect(storageCondition(error)).toBeUndefined();
      expect(storageCondition(Object.assign(new Error("Connection terminated"), { code: "42601" }))).toBeUndefined();
    } finally {
      await client.end();
    }
  });

  it("a handler's own failed call whose cause is a refused connection (fetch failed): the cause is not the store's", async () => {
    const port = await freePort();
    const error = await thrown(() => fetch(`http://127.0.0.1:${port}/`));
    expect(storageCondition(error)).toBeUndefined();
  });
});

const busy = { reason: "store_busy", retryable: true };

/** A connection to the shared test server; `settings` go with its startup (`-c name=value`). */
async function connected(settings = "", user = "postgres"): Promise<pg.Client> {
  const url = new URL(TEST_PG_URL);
  url.username = user;
  if (settings !== "") url.searchParams.set("options", settings);
  const client = new pg.Client({ connectionString: url.toString() });
  client.on("error", () => {});
  await client.connect();
  return client;
}

describe("storageCondition: a PostgreSQL that takes no more connections is the store being unreachable", () => {
  it("a role over its connection limit (53300 'too many connections for role')", async () => {
    const role = uniqueName("full_role");
    await pgQuery(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
    try {
      const error = await thrown(() => connected("", role));
      expect(error).toMatchObject({ code: "53300" });
      expect(storageCondition(error)).toMatchObject(unreachable);
      expect(toRpcError(error).body).toMatchObject({
        code: RpcCode.Unavailable,
        data: { reason: "store_unreachable", retryAfterMs: 1000 },
      });
    } finally {
      await pgQuery(`DROP ROLE ${role}`);
    }
  });

  it("every code of class 53 but a full disk: out of connections, memory or a configured limit", () => {
    for (const code of ["53000", "53200", "53300", "53400"]) {
      expect(storageCondition(Object.assign(new Error("sorry"), { code })), code).toMatchObject(unreachable);
    }
    expect(storageCondition(Object.assign(new Error("could not extend file"), { code: "53100" }))).toMatchObject({ reason: "store_full" });
  });

  it("a server's or a pooler's words for no more connections, whatever SQLSTATE it gives them, or none", () => {
    const cases: Array<[string, string | undefined]> = [
      ["sorry, too many clients already", undefined],
      ["remaining connection slots are reserved for non-replication superuser connections", "XX000"],
      ["no more connections allowed (max_client_conn)", "08P01"],
      ['too many connections for database "app"', "XX000"],
      ["FATAL: Max client connections reached; too many connections", undefined],
    ];
    for (const [message, code] of cases) {
      expect(storageCondition(Object.assign(new Error(message), code === undefined ? {} : { code })), message).toMatchObject(unreachable);
    }
  });

  it("not another library's error in the same words (a handler's MySQL client: ER_CON_COUNT_ERROR 'Too many connections')", () => {
    expect(storageCondition(Object.assign(new Error("Too many connections"), { code: "ER_CON_COUNT_ERROR" }))).toBeUndefined();
  });
});

describe("storageCondition: a statement rolled back for a reason that passes by itself is the store being busy", () => {
  const table = `public.${uniqueName("busy_table")}`;
  afterAll(async () => {
    await pgQuery(`DROP TABLE IF EXISTS ${table}`);
  });

  it("a lock held by another client past the lock timeout (55P03), a statement past the statement timeout (57014), a deadlock (40P01)", async () => {
    await pgQuery(`CREATE TABLE ${table} (id int PRIMARY KEY, v int); INSERT INTO ${table} VALUES (1, 0), (2, 0)`);
    const a = await connected("-c lock_timeout=200 -c statement_timeout=300 -c deadlock_timeout=50");
    const b = await connected("-c deadlock_timeout=5000");
    try {
      await b.query("BEGIN");
      await b.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const locked = await thrown(() => a.query(`SELECT * FROM ${table}`));
      await b.query("ROLLBACK");
      expect(locked).toMatchObject({ code: "55P03" });

      const slow = await thrown(() => a.query("SELECT pg_sleep(2)"));
      expect(slow).toMatchObject({ code: "57014" });

      await a.query("SET lock_timeout = 0; SET statement_timeout = 0");
      await a.query("BEGIN");
      await b.query("BEGIN");
      await a.query(`UPDATE ${table} SET v = 1 WHERE id = 1`);
      await b.query(`UPDATE ${table} SET v = 1 WHERE id = 2`);
      const second = b.query(`UPDATE ${table} SET v = 2 WHERE id = 1`).catch((error: unknown) => error);
      const deadlocked = await thrown(() => a.query(`UPDATE ${table} SET v = 2 WHERE id = 2`));
      await a.query("ROLLBACK");
      await second;
      await b.query("ROLLBACK");
      expect(deadlocked).toMatchObject({ code: "40P01" });

      for (const error of [locked, slow, deadlocked]) {
        expect(storageCondition(error)).toMatchObject(busy);
        expect(toRpcError(error).body).toMatchObject({ code: RpcCode.Unavailable, data: { reason: "store_busy", retryAfterMs: 1000 } });
      }
      expect(storageCondition(Object.assign(new Error("could not serialize access"), { code: "40001" }))).toMatchObject(busy);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });
});
