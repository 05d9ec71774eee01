/**
 * `concurrency` on a tool definition, end to end over real HTTP on a SQLite file, in both eras
 * through TaskClient: with `concurrency: 1` a second task of the tool waits `working` with a
 * "queued" status message, its handler not started, until the first one ends.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { TaskClient } from "../../src/client/task-client.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { startHttpServer } from "../support/http-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "tool-concurrency-"));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each<ProtocolRevision>(["2025-11-25", "2026-07-28"])("a tool with concurrency 1 (%s)", (protocol) => {
  it("the second task waits queued, unstarted, until the first ends", async () => {
    // inlineWaitMs 0: under 2026-07-28 a call as a task is answered with its task at once.
    const fx = await startHttpServer({ app: { store: sqliteStore(join(dir, `${protocol}.db`)), inlineWaitMs: 0 } });
    cleanups.push(() => fx.close());
    const started: string[] = [];
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    fx.app.tool("render", { input: z.object({ scene: z.string() }), taskSupport: "optional", concurrency: 1 }, async ({ scene }) => {
      started.push(scene);
      if (scene === "first") await held;
      return { content: [{ type: "text", text: `rendered ${scene}` }] };
    });
    const client = await TaskClient.connect(fx.url, { protocol });
    cleanups.push(() => client.close());
    const call = async (scene: string) => {
      const made = await client.callTool("render", { scene }, { task: true });
      if (made.kind !== "task") throw new Error("expected a task");
      return made.task;
    };
    const first = await call("first");
    const second = await call("second");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = await second.status();
    expect(waiting.status).toBe("working");
    expect(waiting.statusMessage).toMatch(/^queued/);
    expect(started).toEqual(["first"]);
    release();
    await first.result();
    expect(await second.result()).toMatchObject({ content: [{ type: "text", text: "rendered second" }] });
    expect(started).toEqual(["first", "second"]);
  }, 30_000);
});
