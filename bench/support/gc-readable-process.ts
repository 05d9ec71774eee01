/**
 * A Node process a bench starts and whose memory it reads after two full collections: started with
 * `--expose-gc` and a preload that, on SIGUSR2, collects and prints `process.memoryUsage()`
 * (heap-on-signal.mjs). Ready once it logs the URL it listens on.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PRELOAD = fileURLToPath(new URL("./heap-on-signal.mjs", import.meta.url));

export class GcReadableProcess {
  private stderr = "";
  private readonly reads: ((memory: Memory) => void)[] = [];

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stderr!.on("data", (chunk: Buffer) => this.scan(chunk.toString("utf8")));
  }

  /** Runs `node --expose-gc --import heap-on-signal.mjs …args` in the repository, JSON logs at warn. */
  static start(args: readonly string[]): Promise<GcReadableProcess> {
    const argv = ["--expose-gc", "--import", PRELOAD, ...args];
    const child = spawn(process.execPath, argv, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, MCP_TASKS_LOG_FORMAT: "json", LOG_LEVEL: "warn" },
    });
    return new Promise((resolve, reject) => {
      let seen = "";
      const timer = setTimeout(() => reject(new Error(`not listening after 60 s:\n${seen.slice(-2000)}`)), 60_000);
      const onData = (chunk: Buffer): void => {
        seen += chunk.toString("utf8");
        const url = /listening on (http:\/\/[^\s"]+)/.exec(seen)?.[1];
        if (url === undefined) return;
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        child.stderr!.off("data", onData);
        child.stdout!.resume();
        console.log(
          `server: node ${argv.map((a) => (a === PRELOAD ? "bench/support/heap-on-signal.mjs" : a)).join(" ")} (pid ${child.pid})`,
        );
        resolve(new GcReadableProcess(child, url));
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      child.once("exit", (code) => reject(new Error(`exited ${code}:\n${seen.slice(-2000)}`)));
    });
  }

  private scan(text: string): void {
    this.stderr += text;
    for (let at = this.stderr.indexOf("\n"); at >= 0; at = this.stderr.indexOf("\n")) {
      const line = this.stderr.slice(0, at);
      this.stderr = this.stderr.slice(at + 1);
      if (line.startsWith("heap-after-gc ")) this.reads.shift()?.(JSON.parse(line.slice(14)) as Memory);
    }
  }

  /** The process's memory after two full collections. */
  memory(): Promise<Memory> {
    return new Promise((resolve) => {
      this.reads.push(resolve);
      this.child.kill("SIGUSR2");
    });
  }

  async stop(): Promise<void> {
    const gone = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await gone;
  }
}
