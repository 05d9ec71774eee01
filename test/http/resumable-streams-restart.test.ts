/**
 * Resumable streams across a server restart (SQLite file). Shared sessions are signed with the
 * store's secret and their streams' events are in the file, so a client resumes after the
 * restart; local sessions live in the process and end with it (the client initializes again).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callTool, isAnswerTo, post, rawSession, resume } from "../support/resumable.js";
import { messageOf } from "../support/sse-stream.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const serve = (file: string, sessions: "shared" | "local"): Promise<HttpServerFixture> =>
  startHttpServer({ app: { store: sqliteStore(join(dir, file)) }, http: { sessions } });

describe("resuming a stream after a server restart", () => {
  it("shared sessions on SQLite: the result of a call that ended while its stream was down is replayed by the restarted server", async () => {
    const before = await serve("shared.db", "shared");
    const headers = await rawSession(before.url);
    const stream = await post(before.url, headers, callTool(3, "sleep", { ms: 50 }));
    const priming = await stream.next();
    stream.drop();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the call ends, its result is stored
    await before.close();

    const after = await serve("shared.db", "shared");
    try {
      const resumed = await resume(after.url, headers, priming.id ?? "");
      expect(resumed.response.status).toBe(200);
      const answer = messageOf(await resumed.next(isAnswerTo(3)));
      expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 50 ms" }] });
      await resumed.ended;
    } finally {
      await after.close();
    }
  });

  it("local sessions end with the process: after a restart the resumption answers 404 (initialize again)", async () => {
    const before = await serve("local.db", "local");
    const headers = await rawSession(before.url);
    const priming = await (await post(before.url, headers, callTool(3, "echo", { text: "x" }))).next();
    await before.close();

    const after = await serve("local.db", "local");
    try {
      const response = await fetch(after.url, { headers: { ...headers, accept: "text/event-stream", "last-event-id": priming.id ?? "" } });
      expect(response.status).toBe(404);
      await response.body?.cancel();
    } finally {
      await after.close();
    }
  });
});
