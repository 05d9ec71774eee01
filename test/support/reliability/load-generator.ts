/**
 * Steady concurrent load for the reliability suite: `concurrency` loops, each sending
 * task-augmented `tools/call`s of `sleep` and `steps` (and, every few calls, a plain `echo`) over
 * a {@link RawSession}, recording every task whose CreateTaskResult arrived in a
 * {@link TaskLedger}. It outlives the server it talks to: when the connection fails (the process
 * was killed) a loop drops its session and opens a new one at the current URL, so a scenario can
 * kill and restart the server underneath it.
 */
import { RawSession, RpcAnswerError, TransportError } from "./raw-session.js";
import { TaskLedger, type LoadCall } from "./task-ledger.js";

export interface LoadOptions {
  /**
   * Where to send; several URLs (a cluster's fronts) are shared out among the loops.
   * {@link LoadGenerator.retarget} changes them (a restarted server on a new port).
   */
  url: string | string[];
  /** Loops sending at once. Default 8. */
  concurrency?: number;
  /** Pause of each loop between its calls, ms. Default 5. */
  pauseMs?: number;
}

export class LoadGenerator {
  readonly ledger = new TaskLedger();
  /** Calls sent whose answer never came (the connection died with them): neither acknowledged nor refused. */
  inDoubt = 0;
  /** Plain `echo` calls answered correctly / wrongly. */
  echoes = { right: 0, wrong: 0 };
  /** JSON-RPC errors the server answered with, by "code message". */
  readonly refusals = new Map<string, number>();
  /** Connection failures (server down), by message. */
  transportFailures = 0;
  private urls: string[];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private sequence = 0;

  constructor(private readonly options: LoadOptions) {
    this.urls = typeof options.url === "string" ? [options.url] : options.url;
  }

  start(): this {
    for (let i = 0; i < (this.options.concurrency ?? 8); i++) this.loops.push(this.loop(i));
    return this;
  }

  retarget(url: string | string[]): void {
    this.urls = typeof url === "string" ? [url] : url;
  }

  /** Stops sending and waits for the calls under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  get refused(): number {
    return [...this.refusals.values()].reduce((a, b) => a + b, 0);
  }

  private nextCall(): LoadCall {
    const n = this.sequence++;
    // Arguments vary per call, so a result swapped between tasks would show as wrong.
    return n % 2 === 0
      ? { tool: "sleep", args: { ms: 20 + ((n * 37) % 280) } }
      : { tool: "steps", args: { count: 2 + (n % 7), ms: 20 + ((n * 13) % 40) } };
  }

  private async loop(index: number): Promise<void> {
    let session: RawSession | undefined;
    let calls = 0;
    let opened = 0;
    while (!this.stopped) {
      try {
        // A loop whose node went away moves on to the next URL (a balancer's failover).
        session ??= await RawSession.open(this.urls[(index + opened++) % this.urls.length] as string);
        if (++calls % 5 === 0) {
          const text = `echo ${calls}`;
          const result = await session.request("tools/call", { name: "echo", arguments: { text } });
          const got = (result["content"] as { text?: string }[] | undefined)?.[0]?.text;
          if (got === text) this.echoes.right++;
          else this.echoes.wrong++;
        } else {
          const call = this.nextCall();
          const result = await session
            .request("tools/call", { name: call.tool, arguments: call.args, task: { ttl: 3_600_000 } })
            .catch((error: unknown) => {
              if (error instanceof TransportError) this.inDoubt++;
              throw error;
            });
          const taskId = (result["task"] as { taskId?: string } | undefined)?.taskId;
          if (typeof taskId === "string") this.ledger.add(taskId, call);
        }
      } catch (error) {
        if (error instanceof RpcAnswerError) {
          const key = `${error.error.code} ${error.error.message}`;
          this.refusals.set(key, (this.refusals.get(key) ?? 0) + 1);
          // -32001: the session is unknown here (a restarted server): open another.
          if (error.error.code === -32001) session = undefined;
        } else if (error instanceof TransportError) {
          this.transportFailures++;
          session = undefined;
          await pause(100);
        } else {
          throw error;
        }
      }
      await pause(this.options.pauseMs ?? 5);
    }
    await session?.close();
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
