/**
 * A keyed retry (SEP-3182) from a caller at its cap of active tasks, over real HTTP on a SQLite
 * file, in both eras through TaskClient: the retry gets its task back; a creation under a new key
 * is refused by the cap as before.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { TaskClient } from "../../src/client/task-client.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { RemoteError } from "../../src/mcp/requestor/requestor-errors.js";
import { startHttpServer } from "../support/http-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "keyed-cap-e2e-"));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each<ProtocolRevision>(["2025-11-25", "2026-07-28"])("at the active-task cap (%s)", (protocol) => {
  it("a keyed retry gets its task back, a new key is refused", async () => {
    // inlineWaitMs 0: under 2026-07-28 a call as a task is answered with its task at once.
    const fx = await startHttpServer({ app: { store: sqliteStore(join(dir, `${protocol}.db`)), inlineWaitMs: 0, maxActivePerOwner: 1 } });
    cleanups.push(() => fx.close());
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(async () => release());
    fx.app.tool("render", { input: z.object({ scene: z.string() }), taskSupport: "optional" }, async () => {
      await held;
      return { content: [] };
    });
    const client = await TaskClient.connect(fx.url, { protocol });
    cleanups.push(() => client.close());
    const send = (key: string) => client.callTool("render", { scene: "intro" }, { task: true, idempotencyKey: key });
    const first = await send("render-1");
    const retry = await send("render-1");
    expect(first.kind === "task" && retry.kind === "task" && retry.task.id === first.task.id).toBe(true);
    const refused = await send("render-2").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RemoteError);
    expect((refused as RemoteError).message).toMatch(/Too many active tasks/);
  }, 30_000);
});
