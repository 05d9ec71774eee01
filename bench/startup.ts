/**
 * `npm run bench:startup`: how long the CLI takes to be useful (goals: server listening
 * ≤ 1 s after start; `mcp-tasks --help` ≤ 300 ms), in fresh processes on this machine.
 *
 *   npm start        the repository's `npm start` as package.json defines it, through npm, with
 *                    `--port 0 --store sqlite:<scratch>` appended: spawn → the "listening on" line
 *   dist serve       `node bin/mcp-tasks.js serve --demo` (the compiled CLI, as installed): the same
 *   tsx serve        `node bin/mcp-tasks-dev.js serve --demo` (the sources through tsx): the same
 *   --help           `node bin/mcp-tasks.js --help`: spawn → exit
 *
 * Each is started once unmeasured on a new store file (its first start creates the schema; printed
 * apart), then `--runs` times on that file; fastest and median wall time, and the median CPU time
 * (user + system) the process had used at that moment, which a loaded machine inflates less than
 * the wall time. The dist lines need `npm run build` first (they are skipped without dist/).
 *
 * Flags: `npm run bench:startup -- --help`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { treeCpuOf } from "./support/process-cpu.js";
import { percentile } from "./support/stats.js";

const HELP = `Usage: npm run bench:startup -- [flags]
  --runs N      measured starts of each command (default 7)
  --only A,B    commands to time (default all): npm-start, dist-serve, tsx-serve, help`;

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    only: { type: "string", default: "npm-start,dist-serve,tsx-serve,help" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const runs = numberFlag(HELP, "runs", flags.runs, { min: 1, max: 100 });
const only = new Set(flags.only.split(",").map((s) => s.trim()));

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NODE = process.execPath;

interface Start {
  wallMs: number;
  /** CPU the process had used when it was ready (null where /proc cannot tell, or it already exited). */
  cpuMs: number | null;
}

/**
 * Spawns `command` in its own process group and resolves once a line of its output matches `ready`
 * (or, without `ready`, once it exits 0); then kills the whole group (npm and tsx start children).
 */
function timeStart(command: string[], ready: RegExp | null, timeoutMs = 60_000): Promise<Start> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const elapsed = (): number => Number(process.hrtime.bigint() - started) / 1e6;
    const child = spawn(command[0] as string, command.slice(1), {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      // JSON log lines whatever the terminal; no inherited port.
      env: { ...process.env, MCP_TASKS_LOG_FORMAT: "json", PORT: "0" },
    });
    let done = false;
    const finish = (result: Start | Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      // Wait for the group leader to go, so the next start finds the store file free.
      const settle = (): void => (result instanceof Error ? reject(result) : resolve(result));
      if (child.exitCode !== null || child.signalCode !== null) settle();
      else child.once("exit", settle);
    };
    const timer = setTimeout(() => finish(new Error(`${command.join(" ")}: not ready after ${timeoutMs} ms`)), timeoutMs);
    let output = "";
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      if (ready?.test(output)) finish({ wallMs: elapsed(), cpuMs: treeCpuOf(child.pid) });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      if (ready === null && code === 0) return finish({ wallMs: elapsed(), cpuMs: null });
      finish(new Error(`${command.join(" ")} exited ${code} before it was ready:\n${output.slice(-2000)}`));
    });
  });
}

interface Case {
  name: string;
  label: string;
  command: (store: string) => string[];
  ready: RegExp | null;
  needsDist?: boolean;
}

const LISTENING = /listening on http/;
const npmStart =
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["start"] ?? "?";

const CASES: Case[] = [
  {
    name: "npm-start",
    label: `npm start (${npmStart})`,
    command: (s) => ["npm", "start", "--silent", "--", "--port", "0", "--store", `sqlite:${s}`],
    ready: LISTENING,
  },
  {
    name: "dist-serve",
    label: "node bin/mcp-tasks.js serve --demo",
    command: (s) => [NODE, "bin/mcp-tasks.js", "serve", "--demo", "--port", "0", "--store", `sqlite:${s}`],
    ready: LISTENING,
    needsDist: true,
  },
  {
    name: "tsx-serve",
    label: "node bin/mcp-tasks-dev.js serve --demo (tsx)",
    command: (s) => [NODE, "bin/mcp-tasks-dev.js", "serve", "--demo", "--port", "0", "--store", `sqlite:${s}`],
    ready: LISTENING,
  },
  {
    name: "help",
    label: "node bin/mcp-tasks.js --help",
    command: () => [NODE, "bin/mcp-tasks.js", "--help"],
    ready: null,
    needsDist: true,
  },
];

const ms = (n: number | null): string => (n === null || Number.isNaN(n) ? "–" : `${Math.round(n)} ms`);

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:startup on ${m.cores} cores (${m.model}), node ${m.node}, load avg ${m.load}; ${runs} measured starts each`);
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-startup-"));
  const hasDist = existsSync(join(ROOT, "dist", "cli", "main.js"));
  const rows: string[] = [];
  try {
    for (const c of CASES) {
      if (!only.has(c.name)) continue;
      if (c.needsDist && !hasDist) {
        rows.push(`| ${c.label} | skipped: no dist/ (run \`npm run build\`) | | | |`);
        continue;
      }
      const store = join(dir, `${c.name}.db`);
      const first = await timeStart(c.command(store), c.ready);
      const starts: Start[] = [];
      for (let i = 0; i < runs; i++) starts.push(await timeStart(c.command(store), c.ready));
      const wall = starts.map((s) => s.wallMs).sort((a, b) => a - b);
      const cpu = starts.flatMap((s) => (s.cpuMs === null ? [] : [s.cpuMs])).sort((a, b) => a - b);
      rows.push(
        `| ${c.label} | ${ms(wall[0] ?? NaN)} | ${ms(percentile(wall, 50))} | ${ms(cpu.length > 0 ? percentile(cpu, 50) : null)} | ${ms(first.wallMs)} |`,
      );
      console.log(rows[rows.length - 1]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n| command | fastest | median | CPU (median) | first start (new store) |\n|---|---|---|---|---|\n${rows.join("\n")}`);
  console.log(`\nload avg after: ${machine().load}`);
}

runBench(main, "bench:startup");
