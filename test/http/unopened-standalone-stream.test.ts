/**
 * A local session's standalone (GET) stream before and after the client opens it. Task status
 * notifications (T-NOTE-1: a MAY) meant for it are neither sent nor stored until the client has
 * asked for it: no client could receive them, nor resume them (the event id to resume from comes
 * on that stream). Once it has been opened they are stored even while it is down, and a
 * reconnection with Last-Event-ID replays them — as before.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { rawSession, resume } from "../support/resumable.js";
import { messageOf, openSse } from "../support/sse-stream.js";

let fx: HttpServerFixture;
let dir: string;
let file: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-unopened-"));
  file = join(dir, "tasks.db");
  fx = await startHttpServer({ app: { store: sqliteStore(file) } });
});
afterEach(async () => {
  await fx.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rpc(
  headers: Record<string, string>,
  id: number,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(fx.url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { result: Record<string, unknown> };
  return body.result;
}

/** Creates a `sleep {ms: 0}` task and waits until tasks/get says it completed; returns its id. */
async function completedTask(headers: Record<string, string>): Promise<string> {
  const created = await rpc(headers, 1, "tools/call", { name: "sleep", arguments: { ms: 0 }, task: { ttl: 60_000 } });
  const taskId = (created["task"] as { taskId: string }).taskId;
  for (let i = 2; ; i++) {
    const task = await rpc(headers, i, "tasks/get", { taskId });
    if (task["status"] === "completed") break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // The status notification goes out a turn after the transition (after any waiter): let it.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return taskId;
}

/** Status notifications stored for replay, read from the SQLite file by a connection of our own. */
function storedStatusNotifications(): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT message FROM stream_events").all() as { message: string }[];
    return rows.map((row) => row.message).filter((message) => message.includes('"notifications/tasks/status"'));
  } finally {
    db.close();
  }
}

describe("the standalone stream of a local session", () => {
  it("gets no task notifications built, sent or stored before the client opened it (T-NOTE-1 is a MAY)", async () => {
    const headers = await rawSession(fx.url, {});
    await completedTask(headers);
    expect(storedStatusNotifications()).toEqual([]);
  });

  it("gets none either of a task whose tasks/result was waiting when it ended, once that request has its answer", async () => {
    const headers = await rawSession(fx.url, {});
    const created = await rpc(headers, 1, "tools/call", { name: "sleep", arguments: { ms: 200 }, task: { ttl: 60_000 } });
    const taskId = (created["task"] as { taskId: string }).taskId;
    const answer = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } }),
    });
    expect(await answer.text()).toContain("slept 200 ms");
    // The status notification goes out a turn after the transition (after the waiter): let it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(storedStatusNotifications()).toEqual([]);
  });

  it("once opened, keeps them while it is down and replays them after Last-Event-ID", async () => {
    const headers = await rawSession(fx.url, {});
    const stream = await openSse(fx.url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    const taskId = await completedTask(headers);
    expect(storedStatusNotifications()).toHaveLength(1);
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    const replayed = messageOf(await resumed.next((event) => messageOf(event)?.["method"] === "notifications/tasks/status"));
    resumed.drop();
    expect(replayed?.["params"]).toMatchObject({ taskId, status: "completed" });
  });
});
