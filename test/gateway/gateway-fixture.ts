/** A `mcp-tasks gateway` process in front of a real upstream, and SDK clients to drive it. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { CliProcess, REPO_ROOT } from "../support/cli-process.js";
import { connectHttpClient, type ConnectOptions, type HttpClient } from "../support/http-fixture.js";

export const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
export const BAD_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/bad-upstream.mjs");

export interface GatewayProcess {
  cli: CliProcess;
  url: string;
  connect(options?: ConnectOptions): Promise<HttpClient>;
  /** Pids of the gateway's child processes (its stdio upstream). */
  upstreamPids(): number[];
}

const clients: HttpClient[] = [];

/** Closes every client {@link startGateway} made. For afterEach, before killAll(). */
export async function closeClients(): Promise<void> {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
}

/** Starts `mcp-tasks gateway --port 0 …` and waits until it listens. */
export async function startGateway(args: string[]): Promise<GatewayProcess> {
  const cli = CliProcess.spawn(["gateway", "--port", "0", "--log-level", "debug", "--admin-token", "test-admin", ...args]);
  const url = await cli.url(30_000);
  return {
    cli,
    url,
    async connect(options = {}) {
      const c = await connectHttpClient(url, options);
      clients.push(c);
      return c;
    },
    upstreamPids() {
      let out: string;
      try {
        out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(cli.pid)], { encoding: "utf8" });
      } catch {
        return []; // no children (ps exits 1)
      }
      // tsx's esbuild service is a child of the gateway too (bin/mcp-tasks-dev.js): not an upstream.
      return out
        .split("\n")
        .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null && !/esbuild/.test(m[2] ?? ""))
        .map((m) => Number(m[1]));
    },
  };
}

/** `node <script> <args>` as an --upstream-stdio command line. */
export function nodeCommand(script: string, ...args: string[]): string {
  return [process.execPath, script, ...args].map((w) => JSON.stringify(w)).join(" ");
}

/** Polls `check` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: unknown;
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
