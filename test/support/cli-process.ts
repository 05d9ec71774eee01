import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Recorder } from "./recorder.js";

/** The repository root and the CLI entry point (`node bin/mcp-tasks-dev.js …`: the sources, through tsx). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = fileURLToPath(new URL("../../bin/mcp-tasks-dev.js", import.meta.url));

/**
 * The environment for spawned CLIs: ours, minus anything that would change their defaults. The
 * requestor commands are pinned to 2025-11-25 (MCP_TASKS_PROTOCOL), the era most CLI tests are
 * about, unless `extra` says otherwise (`auto`: server/discover decides,
 * test/e2e/cli-2026.test.ts).
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { MCP_TASKS_PROTOCOL: "2025-11-25", ...process.env, ...extra };
  if (!("PORT" in extra)) delete env["PORT"];
  return env;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<ChildProcess>();

/** Kills every process spawned here that is still running, and waits for each to exit. For afterEach. */
export async function killAll(): Promise<void> {
  const running = [...live];
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("close", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
  live.clear();
}

function track(child: ChildProcess): Promise<Exit> {
  live.add(child);
  return new Promise<Exit>((resolve) => {
    // "close", not "exit": by then stdout and stderr have been read to the end.
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
}

/** A JSON log line of the CLI (pino on stderr), or the raw text when it is not JSON. */
export type LogLine = Record<string, unknown> & { raw: string };

/** A running `mcp-tasks` process. */
export class CliProcess {
  readonly stderr = new Recorder<LogLine>();
  /** stdout, line by line (complete lines only). */
  readonly stdoutLines = new Recorder<string>();
  readonly exited: Promise<Exit>;
  private stdoutText = "";

  private constructor(readonly child: ChildProcess) {
    this.exited = track(child);
    let pending = "";
    const line = (raw: string): void => {
      if (raw.trim() === "") return;
      let parsed: Record<string, unknown> = {};
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === "object" && value !== null) parsed = value as Record<string, unknown>;
      } catch {
        // not a JSON log line
      }
      this.stderr.push({ ...parsed, raw });
    };
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        line(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    });
    child.stderr?.on("end", () => line(pending));
    child.stdout?.setEncoding("utf8");
    let partial = "";
    child.stdout?.on("data", (chunk: string) => {
      this.stdoutText += chunk;
      partial += chunk;
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        this.stdoutLines.push(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
    });
  }

  /**
   * `node bin/mcp-tasks-dev.js <args>` in the repository root. stdin is a pipe unless `stdin: "ignore"`.
   * `nodeArgs`: options for node itself, before the entry point (`--expose-gc`, `--import …`).
   */
  static spawn(args: string[], options: { env?: Record<string, string>; stdin?: "pipe" | "ignore"; nodeArgs?: string[] } = {}): CliProcess {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
      cwd: REPO_ROOT,
      env: cliEnv(options.env),
      stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
    });
    return new CliProcess(child);
  }

  /** A process spawned some other way (`npm start`), read like the CLI's own. */
  static of(child: ChildProcess): CliProcess {
    return new CliProcess(child);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error("the process did not start");
    return this.child.pid;
  }

  get stdout(): string {
    return this.stdoutText;
  }

  /** Writes one JSON-RPC message to stdin, newline-delimited (the stdio transport's framing). */
  send(message: unknown): void {
    if (!this.child.stdin) throw new Error("spawned without a stdin pipe");
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  get stderrText(): string {
    return this.stderr.items.map((l) => l.raw).join("\n");
  }

  /** The URL the HTTP server logged it listens on (the "url" field of its JSON log line). */
  async url(timeoutMs = 20_000): Promise<string> {
    const died = this.exited.then((exit) => {
      throw new Error(`the server exited (${JSON.stringify(exit)}) before listening; stderr:\n${this.stderrText}`);
    });
    const line = await Promise.race([
      this.stderr.waitFor((l) => typeof l["url"] === "string", "the server to log its URL", timeoutMs),
      died,
    ]);
    return line["url"] as string;
  }

  /** Sends `signal` and waits for the process to exit. */
  async kill(signal: NodeJS.Signals): Promise<Exit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** Runs the CLI to completion (with a deadline) and returns its exit and output. */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const cli = CliProcess.spawn(args, options.env ? { env: options.env } : {});
  const timer = setTimeout(() => cli.child.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  const exit = await cli.exited;
  clearTimeout(timer);
  return { ...exit, stdout: cli.stdout, stderr: cli.stderrText };
}
