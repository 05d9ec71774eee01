/**
 * `serve` refused for its port stops before it opens its store: a real process, a port held by
 * another listener, a SQLite file that must not appear.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";

let dir: string | undefined;
let holder: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  holder = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

it("serve on a port in use exits 1 naming --port and creates no SQLite file", { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-port-in-use-"));
  const held = createServer();
  holder = held;
  const port = await new Promise<number>((resolve) =>
    held.listen(0, "127.0.0.1", () => resolve((held.address() as { port: number }).port)),
  );
  const file = join(dir, "tasks.db");
  const run = await runCli(["serve", "--demo", "--port", String(port), "--store", `sqlite:${file}`], { timeoutMs: 40_000 });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`mcp-tasks: cannot listen on 127.0.0.1:${port}: the port is in use`);
  expect(existsSync(file)).toBe(false);
  expect(readdirSync(dir)).toEqual([]);
});
