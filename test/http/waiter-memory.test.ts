/**
 * What a waiting request costs `serve` in memory, bounded (issue 43, "bounded resources"): a
 * real `mcp-tasks serve --demo` process (from the sources) holds 1,000 waiters per line, each on
 * a connection of its own, and its heap per waiter is read after two full collections. This is
 * `npm run bench:waiters` (bench/waiters.ts) run as a test: the bench starts the server, opens the
 * waiters and prints the table read here.
 *
 * The bounds leave a margin of about 1 KB over today's figures from the sources (9.7–10.1,
 * 9.2–9.3 and 10.4–10.8 KB at 1,000 waiters, three runs; `dist/` measures less, 9.4, 8.8 and
 * 8.9 KB at 2,000: docs/performance.md, "Memory per waiting request") and sit below what the
 * same waiters cost when a streamed 2025-11-25 `tasks/result` went through the SDK's `Protocol`
 * and each wait listened to an `AbortSignal` (14.4, 12.2–12.7 and 12.2–12.4 KB from the
 * sources), and far below its cost when it streamed through the SDK's per-request transport
 * (28.5 KB, `dist/`).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Heap KB per waiter each line may cost at most. */
const BOUNDS_KB = {
  "2025-11-25 tasks/result, 10 sessions, no GET stream": 11,
  "2025-11-25 tasks/result, 10 sessions, their GET streams open": 10.5,
  "2026-07-28 subscriptions/listen": 11.8,
} as const;

function runBench(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/waiters.ts", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`bench:waiters exited ${code}:\n${out.slice(-3000)}`))));
  });
}

it(
  "a waiting tasks/result (both 2025-11-25 paths) and a 2026-07-28 subscriptions/listen each cost a bounded heap in serve",
  { timeout: 600_000 },
  async () => {
    const out = await runBench(["--waiters", "1000", "--lines", "2025,2025-get-stream,2026", "--sources"]);
    const heapKb = (label: string): number => {
      const line = out.split("\n").find((l) => l.startsWith(label) && /-?\d+\.\d\s+-?\d+\.\d\s+\S+ → /.test(l));
      if (line === undefined) throw new Error(`no figures for "${label}" in:\n${out}`);
      return Number(/(-?\d+\.\d)\s+-?\d+\.\d\s+\S+ → /.exec(line)![1]);
    };
    const measured = Object.fromEntries(Object.keys(BOUNDS_KB).map((label) => [label, heapKb(label)]));
    const over = Object.entries(BOUNDS_KB)
      .filter(([label, bound]) => measured[label]! > bound)
      .map(([label, bound]) => `${label}: ${measured[label]} KB per waiter, bound ${bound} KB`);
    expect(over, JSON.stringify(measured)).toEqual([]);
  },
);
