/**
 * Idempotent tools/call (docs/idempotency.md) on a server that answers a quick 2026-07-28 call
 * inline (the default inline wait): a retry under the key of a task that already ended answers
 * with that task, the same taskId in its current state, in both eras; never a result in its place.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskClient } from "../../src/client/task-client.js";
import { DEFAULT_INLINE_WAIT_MS } from "../../src/mcp/task-server-config.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { ALICE, startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { WHOLE_TASK_ID } from "../support/task-id-pattern.js";

let dir: string;
let fx: TwoPrincipals;
let runs = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-idempotency-inline-"));
  fx = await startTwoPrincipals({ app: { store: sqliteStore(join(dir, "tasks.db")) } });
  fx.fx.app.tool(
    "slow-count",
    { description: "Counts its runs, then waits ms.", input: z.object({ ms: z.number() }), taskSupport: "optional" },
    async ({ ms }) => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text", text: "counted" }] };
    },
  );
});

afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(["2025-11-25", "2026-07-28"] as const)("a keyed retry of a task that ended (%s)", (protocol) => {
  it("answers with the same task, completed, and runs nothing again", async () => {
    const client = await TaskClient.connect(fx.fx.url, { protocol, token: ALICE.token });
    try {
      const before = runs;
      const key = `inline-${protocol}-${Math.random().toString(36).slice(2)}`;
      // Longer than the inline wait, so the first answer is a task under both eras.
      const first = await client.callTool("slow-count", { ms: DEFAULT_INLINE_WAIT_MS * 2 }, { task: true, idempotencyKey: key });
      if (first.kind !== "task") throw new Error(`the first call should have answered with a task, got ${first.kind}`);
      expect(first.task.id).toMatch(WHOLE_TASK_ID);
      expect((await first.task.result()).content).toEqual([{ type: "text", text: "counted" }]);
      const again = await client.callTool("slow-count", { ms: DEFAULT_INLINE_WAIT_MS * 2 }, { task: true, idempotencyKey: key });
      if (again.kind !== "task") throw new Error(`the retry should have answered with the task, got ${again.kind}`);
      expect(again.task.id).toBe(first.task.id);
      expect((await again.task.status()).status).toBe("completed");
      expect(runs - before).toBe(1);
    } finally {
      await client.close();
    }
  });
});
