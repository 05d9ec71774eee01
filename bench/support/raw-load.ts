/**
 * The load generator of `npm run bench`, run as its own process (forked by {@link RawLoad}) so its
 * CPU is not taken from the server under test's event loop: `concurrency` lanes, each with one
 * request in flight at a time, over a keep-alive {@link RawRpc}. Creations are task-augmented
 * `tools/call sleep {ms: 0}`; lookups are `tasks/get` of tasks the lane's session created.
 *
 * Eras: "2025-11-25" opens `sessions` sessions and spreads the lanes over them; "2026-07-28"
 * sends stateless requests, each with its `_meta` envelope and routing headers.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openSession, RawRpc, taskIdIn } from "./raw-rpc.js";
import { wallNow } from "./wall-clock.js";

export type LoadEra = "2025-11-25" | "2026-07-28";
/**
 * "create": task-augmented `tools/call sleep {ms: 0}`; "get": `tasks/get` of the lane's tasks;
 * "wake" (2025-11-25 only): a `sleep {ms: wakeSleepMs}` task, then its blocking `tasks/result`
 * sent at once; the recorded figure is the time from the task's terminal `lastUpdatedAt` (the
 * server's stamp, read afterwards with `tasks/get`) to the moment the result was received, on this
 * machine's one clock. The server stamps whole milliseconds, so the figure reads up to 1 ms high.
 */
export type LoadOp = "create" | "get" | "wake";

export interface LoadSetup {
  url: string;
  era: LoadEra;
  concurrency: number;
  /** 2025-11-25 only: sessions the lanes are spread over. */
  sessions: number;
  /** ttl asked of each created task (2025-11-25's `params.task.ttl`). */
  ttlMs: number;
  /** "wake": how long each sleep task works (default 50 ms). */
  wakeSleepMs?: number;
  /** 2025-11-25: each session also holds its standalone (GET) stream open, as the SDK's client does. */
  standaloneStreams?: boolean;
}

export interface LoadRound {
  /** Requests answered within the round's time. */
  count: number;
  /** Each answered request's round trip (ms), when the round was recorded. */
  latencies: number[];
  /** CPU time the load generator itself spent in the round (ms): the client's share of the machine. */
  clientCpuMs: number;
}

type Command = { type: "open"; setup: LoadSetup } | { type: "run"; op: LoadOp; ms: number; record: boolean } | { type: "close" };
type Reply = { type: "opened" } | { type: "ran"; round: LoadRound } | { type: "failed"; message: string };

/** A load generator in a child process, driven one command at a time. */
export class RawLoad {
  private constructor(private readonly child: ChildProcess) {}

  static async open(setup: LoadSetup): Promise<RawLoad> {
    const child = fork(fileURLToPath(import.meta.url), ["--child"], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const load = new RawLoad(child);
    await load.ask({ type: "open", setup });
    return load;
  }

  async run(op: LoadOp, ms: number, record: boolean): Promise<LoadRound> {
    const reply = await this.ask({ type: "run", op, ms, record });
    if (reply.type !== "ran") throw new Error("load generator: unexpected reply");
    return reply.round;
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.send({ type: "close" } satisfies Command);
    await exited;
  }

  private ask(command: Command): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`load generator exited (${code})`));
      this.child.once("exit", onExit);
      this.child.once("message", (reply: Reply) => {
        this.child.off("exit", onExit);
        if (reply.type === "failed") reject(new Error(`load generator: ${reply.message}`));
        else resolve(reply);
      });
      this.child.send(command);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The child side.

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const ENVELOPE_2026 = JSON.stringify({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
});

/** How one lane talks: the body and headers of a creation and of a lookup. */
interface Lane {
  headers: Record<string, string>;
  /** Task ids this lane's session created, looked up in turn by "get". */
  tasks: string[];
  next: number;
}

class Generator {
  private readonly rpc: RawRpc;
  private lanes: Lane[] = [];
  private streams: (() => void)[] = [];
  private id = 1;

  constructor(private readonly setup: LoadSetup) {
    this.rpc = new RawRpc(setup.url, setup.concurrency);
  }

  async open(): Promise<void> {
    const { era, concurrency, sessions } = this.setup;
    if (era === "2026-07-28") {
      this.lanes = Array.from({ length: concurrency }, () => ({ headers: { "mcp-protocol-version": era }, tasks: [], next: 0 }));
      return;
    }
    const opened = await Promise.all(Array.from({ length: Math.min(sessions, concurrency) }, () => openSession(this.rpc, era)));
    // Lanes of one session share its task list: a task is its session's (T-SEC-1), not its lane's.
    const shared = opened.map((sessionId) => ({
      headers: { "mcp-session-id": sessionId, "mcp-protocol-version": era },
      tasks: [] as string[],
      next: 0,
    }));
    if (this.setup.standaloneStreams) this.streams = await Promise.all(shared.map((lane) => this.rpc.openStandaloneStream(lane.headers)));
    this.lanes = Array.from({ length: concurrency }, (_, i) => shared[i % shared.length]!);
  }

  private body(op: LoadOp, lane: Lane): { body: string; headers: Record<string, string> } {
    const id = this.id++;
    const modern = this.setup.era === "2026-07-28";
    if (op === "create") {
      const params = modern
        ? `"name":"sleep","arguments":{"ms":0},"_meta":${ENVELOPE_2026}`
        : `"name":"sleep","arguments":{"ms":0},"task":{"ttl":${this.setup.ttlMs}}`;
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{${params}}}`;
      return { body, headers: modern ? { ...lane.headers, "mcp-method": "tools/call", "mcp-name": "sleep" } : lane.headers };
    }
    const taskId = lane.tasks[lane.next++ % lane.tasks.length];
    if (taskId === undefined) throw new Error("tasks/get before any task was created");
    const params = modern ? `"taskId":"${taskId}","_meta":${ENVELOPE_2026}` : `"taskId":"${taskId}"`;
    const body = `{"jsonrpc":"2.0","id":${id},"method":"tasks/get","params":{${params}}}`;
    return { body, headers: modern ? { ...lane.headers, "mcp-method": "tasks/get", "mcp-name": taskId } : lane.headers };
  }

  private async wake(lane: Lane): Promise<number> {
    const sleepMs = this.setup.wakeSleepMs ?? 50;
    const created = await this.rpc.post(
      `{"jsonrpc":"2.0","id":${this.id++},"method":"tools/call","params":{"name":"sleep","arguments":{"ms":${sleepMs}},"task":{"ttl":${this.setup.ttlMs}}}}`,
      lane.headers,
    );
    const taskId = taskIdIn(created.text);
    if (taskId === "") throw new Error(`wake: creation answered ${created.status}: ${created.text.slice(0, 300)}`);
    const result = await this.rpc.post(
      `{"jsonrpc":"2.0","id":${this.id++},"method":"tasks/result","params":{"taskId":"${taskId}"}}`,
      lane.headers,
    );
    const received = wallNow();
    if (result.status !== 200 || !result.text.includes('"result"'))
      throw new Error(`wake: tasks/result answered ${result.status}: ${result.text.slice(0, 300)}`);
    const got = await this.rpc.post(
      `{"jsonrpc":"2.0","id":${this.id++},"method":"tasks/get","params":{"taskId":"${taskId}"}}`,
      lane.headers,
    );
    const stamp = /"lastUpdatedAt":"([^"]+)"/.exec(got.text)?.[1];
    if (stamp === undefined) throw new Error(`wake: tasks/get carried no lastUpdatedAt: ${got.text.slice(0, 300)}`);
    return received - Date.parse(stamp);
  }

  async run(op: LoadOp, ms: number, record: boolean): Promise<LoadRound> {
    if (op === "wake") return this.runWake(ms, record);
    const end = performance.now() + ms;
    const cpu = process.cpuUsage();
    const latencies: number[] = [];
    let count = 0;
    await Promise.all(
      this.lanes.map(async (lane) => {
        while (performance.now() < end) {
          const { body, headers } = this.body(op, lane);
          const sent = performance.now();
          const response = await this.rpc.post(body, headers);
          const received = performance.now();
          const taskId = response.status === 200 ? taskIdIn(response.text) : "";
          if (taskId === "") throw new Error(`${op} answered ${response.status}: ${response.text.slice(0, 300)}`);
          if (op === "create" && lane.tasks.length < 5000) lane.tasks.push(taskId);
          if (received <= end) {
            count++;
            if (record) latencies.push(received - sent);
          }
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { count, latencies, clientCpuMs: (used.user + used.system) / 1000 };
  }

  private async runWake(ms: number, record: boolean): Promise<LoadRound> {
    if (this.setup.era !== "2025-11-25") throw new Error("wake: tasks/result is a 2025-11-25 method");
    const end = performance.now() + ms;
    const cpu = process.cpuUsage();
    const latencies: number[] = [];
    let count = 0;
    await Promise.all(
      this.lanes.map(async (lane) => {
        while (performance.now() < end) {
          const figure = await this.wake(lane);
          count++;
          if (record) latencies.push(figure);
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { count, latencies, clientCpuMs: (used.user + used.system) / 1000 };
  }

  close(): void {
    for (const closeStream of this.streams) closeStream();
    this.rpc.close();
  }
}

if (process.argv[2] === "--child") {
  let generator: Generator | undefined;
  const reply = (message: Reply): void => void process.send?.(message);
  process.on("message", (command: Command) => {
    const work = async (): Promise<void> => {
      if (command.type === "open") {
        generator = new Generator(command.setup);
        await generator.open();
        reply({ type: "opened" });
      } else if (command.type === "run") {
        if (!generator) throw new Error("run before open");
        reply({ type: "ran", round: await generator.run(command.op, command.ms, command.record) });
      } else {
        generator?.close();
        process.exit(0);
      }
    };
    work().catch((error: unknown) => reply({ type: "failed", message: error instanceof Error ? error.message : String(error) }));
  });
}
