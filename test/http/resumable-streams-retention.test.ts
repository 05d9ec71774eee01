/**
 * Retention of stored stream events, on each store (memory, SQLite, PostgreSQL): bounded by age
 * and per stream, and what it means for a client — an id pruned away can no longer be resumed from.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { StreamEventLog } from "../../src/http/resumable-streams.js";
import { silentLogger } from "../../src/core/logger.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";
import { callTool, isAnswerTo, post, rawSession } from "../support/resumable.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-retention-"));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

const stores: Array<[string, () => TaskStore]> = [
  ["memory", () => memoryStore()],
  ["SQLite", () => sqliteStore(join(dir, `${uniqueName("r")}.db`))],
  [
    "PostgreSQL",
    () => {
      const schema = uniqueName("resume_retention");
      schemas.push(schema);
      return postgresStore(TEST_PG_URL, { schema });
    },
  ],
];

const message = (n: number) => ({ jsonrpc: "2.0" as const, method: "notifications/message", params: { n } });

describe.each(stores)("stream event retention (%s)", (_name, open) => {
  let store: TaskStore;
  let now = 1_000_000;
  beforeEach(() => {
    store = open();
  });
  afterEach(async () => store.close());

  const logOf = (options: { maxAgeMs?: number; eventsPerStream?: number }) => {
    const events = store.streamEvents;
    if (!events) throw new Error("the store keeps no stream events");
    return new StreamEventLog(events, silentLogger, options, () => now);
  };
  const replayed = async (log: StreamEventLog, session: string, stream: string, after: string): Promise<unknown[]> => {
    const sent: unknown[] = [];
    await log.replay(session, stream, after, (_id, m) => void sent.push(m));
    return sent;
  };

  it("replays a stream's events after an id, in order, leaving out priming events", async () => {
    const log = logOf({});
    const primed = await log.append("s", "a", {});
    const ids = [];
    for (let n = 1; n <= 3; n++) ids.push(await log.append("s", "a", message(n)));
    await log.append("s", "b", message(99));
    expect(await replayed(log, "s", "a", primed)).toEqual([message(1), message(2), message(3)]);
    expect(await replayed(log, "s", "a", ids[0] ?? "")).toEqual([message(2), message(3)]);
    log.close();
  });

  it("names an event's stream only to its own session", async () => {
    const log = logOf({});
    const id = await log.append("mine", "a", message(1));
    expect(await log.streamOf("mine", id)).toBe("a");
    expect(await log.streamOf("theirs", id)).toBeNull();
    expect(await log.streamOf("mine", "12abc")).toBeNull();
    log.close();
  });

  it("prunes events older than maxAgeMs: their ids no longer name a stream", async () => {
    const log = logOf({ maxAgeMs: 1000 });
    const old = await log.append("s", "a", message(1));
    now += 2000;
    const fresh = await log.append("s", "a", message(2));
    expect(await log.pruneOld()).toBe(1);
    expect(await log.streamOf("s", old)).toBeNull();
    expect(await log.streamOf("s", fresh)).toBe("a");
    log.close();
  });

  it("keeps at most eventsPerStream of a stream's newest events (trimmed as it is written)", async () => {
    const log = logOf({ eventsPerStream: 10 });
    const ids: string[] = [];
    for (let n = 1; n <= 40; n++) ids.push(await log.append("s", "a", message(n)));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the trim runs after the write
    const kept = await replayed(log, "s", "a", "0");
    expect(kept.length).toBeGreaterThanOrEqual(10);
    expect(kept.length).toBeLessThanOrEqual(11); // trimmed every tenth of the bound
    expect(kept.at(-1)).toEqual(message(40));
    expect(await log.streamOf("s", ids[0] ?? "")).toBeNull();
    log.close();
  });
});

describe("retention seen by a client", () => {
  let fx: HttpServerFixture;
  beforeEach(async () => {
    fx = await startHttpServer({ http: { resumableStreams: { eventsPerStream: 3 } } });
  });
  afterEach(async () => fx.close());

  it("refuses with HTTP 400 a Last-Event-ID whose event was pruned, and resumes from one still kept", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(1, "sleep", { ms: 30, steps: 10 }, { progressToken: "p" }));
    await stream.next(isAnswerTo(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [first] = stream.events;
    const last = stream.events.at(-2);
    const pruned = await fetch(fx.url, { headers: { ...headers, accept: "text/event-stream", "last-event-id": first?.id ?? "" } });
    expect(pruned.status).toBe(400);
    await pruned.body?.cancel();
    const kept = await fetch(fx.url, { headers: { ...headers, accept: "text/event-stream", "last-event-id": last?.id ?? "" } });
    expect(kept.status).toBe(200);
    await kept.body?.cancel();
  });
});
