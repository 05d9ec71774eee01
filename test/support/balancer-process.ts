/**
 * A real nginx or HAProxy in front of cluster fronts, run from the example configuration in
 * docs/deploy/ — the same file, with only the fronts' addresses, the listen port and (nginx) the
 * log directory replaced — as a foreground process in a temporary directory of its own. Nothing is
 * installed here: a missing binary is an error naming the Debian package (.ci/run installs both).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { REPO_ROOT } from "./cli-process.js";

export type BalancerKind = "nginx" | "haproxy";

interface Kind {
  config: string;
  /** The example's two front addresses, in order. */
  fronts: [string, string];
  /** The example's listen directive, and how to write it with another port. */
  listen: string;
  listenOn(port: number): string;
  args(dir: string, config: string): string[];
}

const KINDS: Record<BalancerKind, Kind> = {
  nginx: {
    config: "docs/deploy/nginx.conf",
    fronts: ["front1:3000", "front2:3000"],
    listen: "listen 8080;",
    listenOn: (port) => `listen 127.0.0.1:${port};`,
    // The pid file and error log are not in the example (left to the command line), so a test run
    // touches nothing outside its directory.
    args: (dir, config) => ["-p", dir, "-c", config, "-g", `daemon off; pid ${join(dir, "nginx.pid")}; error_log stderr notice;`],
  },
  haproxy: {
    config: "docs/deploy/haproxy.cfg",
    fronts: ["front1:3000", "front2:3000"],
    listen: "bind :8080",
    listenOn: (port) => `bind 127.0.0.1:${port}`,
    args: (dir, config) => ["-f", config, "-db", "-p", join(dir, "haproxy.pid")],
  },
};

/** The example configuration's text, as in the repository. */
export function exampleConfig(kind: BalancerKind): string {
  return readFileSync(join(REPO_ROOT, KINDS[kind].config), "utf8");
}

/** Replaces `from` by `to`, insisting it occurs exactly once (an edit to the example must not silently break the test). */
function replaceOnce(text: string, from: string, to: string, file: string): string {
  const parts = text.split(from);
  if (parts.length !== 2) throw new Error(`${file}: expected "${from}" exactly once, found it ${parts.length - 1} times`);
  return parts.join(to);
}

/** The binary on PATH or in the sbin directories (Debian installs both in /usr/sbin, not on every user's PATH). */
function findBinary(name: string): string | undefined {
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  return dirs
    .filter((d) => d.startsWith("/"))
    .map((d) => join(d, name))
    .find((path) => existsSync(path));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export class BalancerProcess {
  private output = "";
  private readonly exited: Promise<void>;

  private constructor(
    readonly kind: BalancerKind,
    /** The balancer's MCP endpoint. */
    readonly url: string,
    /** The rendered configuration it runs. */
    readonly config: string,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer): void => {
      this.output += chunk.toString("utf8");
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
  }

  /** Starts `kind` from its example configuration in front of `fronts` (host:port each) and waits until it forwards. */
  static async start(kind: BalancerKind, fronts: readonly [string, string]): Promise<BalancerProcess> {
    const spec = KINDS[kind];
    const binary = findBinary(kind);
    if (!binary) {
      throw new Error(
        `${kind} is not installed: this test runs docs/deploy's example configuration in a real ${kind} (apt-get install ${kind})`,
      );
    }
    const dir = mkdtempSync(join(tmpdir(), `mcp-tasks-${kind}-`));
    const port = await freePort();
    let config = exampleConfig(kind);
    config = replaceOnce(config, spec.fronts[0], fronts[0], spec.config);
    config = replaceOnce(config, spec.fronts[1], fronts[1], spec.config);
    config = replaceOnce(config, spec.listen, spec.listenOn(port), spec.config);
    if (kind === "nginx") config = replaceOnce(config, "/var/log/nginx/", `${dir}/`, spec.config);
    const path = join(dir, kind === "nginx" ? "nginx.conf" : "haproxy.cfg");
    writeFileSync(path, config);
    const child = spawn(binary, spec.args(dir, path), { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    const balancer = new BalancerProcess(kind, `http://127.0.0.1:${port}/mcp`, config, dir, child);
    await balancer.ready();
    return balancer;
  }

  /** Until /readyz answers 200 through the balancer (it listens and reaches a front). */
  private async ready(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      if (exited) throw new Error(`${this.kind} exited before serving; its output:\n${this.output}`);
      const status = await fetch(new URL("/readyz", this.url)).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline)
        throw new Error(`${this.kind} did not forward /readyz within ${timeoutMs} ms (last status ${status}); its output:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** What the balancer logged per request: nginx's access log file, HAProxy's stdout. */
  requestLog(): string {
    if (this.kind === "haproxy") return this.output;
    const file = join(this.dir, "mcp-tasks.access.log");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  /** Stops it (SIGTERM, then SIGKILL after 3 s) and removes its directory. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 3_000);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
