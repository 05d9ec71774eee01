/**
 * The storage-condition classifier over the errors node-postgres really throws when the database
 * goes away — each one obtained here for real (a closed port, a backend terminated from another
 * connection, a socket that never answers, a client ended under a query), not written by hand:
 * the driver's words and fields are what the classifier must read.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { RpcCode, toRpcError } from "../../src/core/errors.js";
import { storageCondition } from "../../src/core/storage-condition.js";
import { freePort } from "../support/free-port.js";
import { TEST_PG_URL } from "../support/postgres.js";

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
    expect((error as Error).message).toMatch(/^(Connection terminated unexpectedly|Client has encountered a connection error and is not queryable)$/);
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
    for (const code of ["ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "57P02", "57P03", "08000", "08003", "08006", "08001", "08P01"]) {
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
