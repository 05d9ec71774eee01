/**
 * A real cluster for the integration tests of test/cluster: `mcp-tasks serve` front nodes and
 * `mcp-tasks worker` processes (`node bin/mcp-tasks-dev.js …`) on one fresh PostgreSQL schema, and a
 * balancer without sticky sessions in front of the fronts.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CliProcess, type LogLine } from "./cli-process.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "./postgres.js";
import { Recorder } from "./recorder.js";

export interface ClusterOptions {
  /** `serve --workers 0` front nodes. Default 2. */
  fronts?: number;
  /** `worker` processes. Default 2. */
  workers?: number;
  /** `worker --concurrency`. Default 4. */
  concurrency?: number;
  /** `--lease-ms` of every process (workers hold leases; fronts reap them). Default: the CLI's. */
  leaseMs?: number;
  /** `--log-level` of every process. Default "debug" (tests read the workers' logs). */
  logLevel?: string;
  /** The PostgreSQL server. Default the shared test server ({@link TEST_PG_URL}). */
  pgUrl?: string;
  /** More `serve` arguments for every front, e.g. `--host 0.0.0.0` behind a real balancer. */
  frontArgs?: string[];
  /** More `worker` arguments for every worker, e.g. `--drain-timeout 300`. */
  workerArgs?: string[];
  /** How long one process may take to come up. Default 20 s; a bench starting nodes under load needs more. */
  startTimeoutMs?: number;
  /** The fronts' command: `serve` (default) or `gateway` (test/gateway/gateway-cluster.test.ts). */
  frontCommand?: "serve" | "gateway";
  /** What every process runs, fronts and workers alike. Default `--demo`; a gateway cluster names its upstream. */
  toolArgs?: string[];
  /** Serve the web view on the fronts (give them `--admin-token` in frontArgs). Default off (`--no-web`). */
  web?: boolean;
  /** More environment for each process, by role and start order (e.g. each its own OTEL_SERVICE_NAME). Default none. */
  env?: (role: "front" | "worker", index: number) => Record<string, string>;
}

/** How long one process may take to come up (tsx compiles on the fly; two shared cores). */
const START_TIMEOUT_MS = 20_000;

export class Cluster {
  readonly fronts: CliProcess[] = [];
  readonly workers: CliProcess[] = [];
  /** The fronts' MCP endpoint URLs, in the order of {@link fronts}. */
  readonly urls: string[] = [];
  private readonly all: CliProcess[] = [];
  private started = { front: 0, worker: 0 };

  private constructor(
    readonly schema: string,
    private readonly options: Required<Omit<ClusterOptions, "leaseMs">> & { leaseMs: number | undefined },
  ) {}

  /** `postgres://…?schema=<this cluster's schema>` */
  get store(): string {
    return `${this.options.pgUrl}?schema=${this.schema}`;
  }

  /** The NOTIFY channel the processes LISTEN on (see src/cli/backend.ts). */
  get channel(): string {
    return `mcp_tasks_${this.schema}`;
  }

  /** Starts the processes on a fresh schema and waits until each is ready (fronts listening, workers started). */
  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const cluster = new Cluster(uniqueName("cluster"), {
      fronts: options.fronts ?? 2,
      workers: options.workers ?? 2,
      concurrency: options.concurrency ?? 4,
      leaseMs: options.leaseMs,
      logLevel: options.logLevel ?? "debug",
      pgUrl: options.pgUrl ?? TEST_PG_URL,
      frontArgs: options.frontArgs ?? [],
      workerArgs: options.workerArgs ?? [],
      startTimeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
      frontCommand: options.frontCommand ?? "serve",
      toolArgs: options.toolArgs ?? ["--demo"],
      web: options.web ?? false,
      env: options.env ?? (() => ({})),
    });
    try {
      // All at once: migrations run under an advisory lock, so concurrent starts are safe (and
      // tested that way).
      await Promise.all([
        ...Array.from({ length: cluster.options.fronts }, () => cluster.startFront()),
        ...Array.from({ length: cluster.options.workers }, () => cluster.startWorker()),
      ]);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  private common(): string[] {
    const args = [...this.options.toolArgs, "--store", this.store, "--log-level", this.options.logLevel];
    if (this.options.leaseMs !== undefined) args.push("--lease-ms", String(this.options.leaseMs));
    return args;
  }

  /** Starts one more `serve --workers 0` (or `gateway --workers 0`) and waits for its URL. */
  async startFront(): Promise<CliProcess> {
    // Fronts started together come up in any order; each keeps its start slot in `fronts` and
    // `urls`, so index n is the front given env("front", n).
    const slot = this.started.front++;
    const front = CliProcess.spawn(
      [
        this.options.frontCommand,
        ...this.common(),
        "--port",
        "0",
        "--workers",
        "0",
        ...(this.options.web ? [] : ["--no-web"]),
        ...this.options.frontArgs,
      ],
      {
        env: this.options.env("front", slot),
      },
    );
    this.all.push(front);
    const url = await front.url(this.options.startTimeoutMs);
    this.fronts[slot] = front;
    this.urls[slot] = url;
    return front;
  }

  /**
   * Starts one more `worker` and waits until it claims work. `store`: another way to the same
   * store (a proxy in between); `env`: more environment for its process.
   */
  async startWorker(options: { store?: string; env?: Record<string, string> } = {}): Promise<CliProcess> {
    const args = ["worker", ...this.common(), "--concurrency", String(this.options.concurrency), ...this.options.workerArgs];
    if (options.store !== undefined) args[args.indexOf(this.store)] = options.store;
    const worker = CliProcess.spawn(args, { env: { ...this.options.env("worker", this.started.worker++), ...options.env } });
    this.all.push(worker);
    const died = worker.exited.then((exit) => {
      throw new Error(`the worker exited (${JSON.stringify(exit)}) before starting; stderr:\n${worker.stderrText}`);
    });
    await Promise.race([
      worker.stderr.waitFor((l) => l["msg"] === "worker started", "the worker to start", this.options.startTimeoutMs),
      died,
    ]);
    this.workers.push(worker);
    return worker;
  }

  /** The worker whose log says it claimed `taskId` (waits for that line). */
  async claimer(taskId: string, timeoutMs = 10_000): Promise<CliProcess> {
    return this.workerLogging((l) => l["msg"] === "claimed task" && l["taskId"] === taskId, `a worker to claim ${taskId}`, timeoutMs);
  }

  /**
   * The worker whose log says it completed `taskId` (waits for that line). A task that parked while
   * waiting may be resumed, and completed, by a worker other than the one that first claimed it.
   */
  async completer(taskId: string, timeoutMs = 10_000): Promise<CliProcess> {
    return this.workerLogging((l) => l["audit"] === "completed" && l["taskId"] === taskId, `a worker to complete ${taskId}`, timeoutMs);
  }

  /** The first worker whose log has (or gets) a line that matches. */
  private async workerLogging(match: (l: LogLine) => boolean, what: string, timeoutMs: number): Promise<CliProcess> {
    return Promise.any(
      this.workers.map(async (worker) => {
        await worker.stderr.waitFor(match, what, timeoutMs);
        return worker;
      }),
    );
  }

  /** SIGKILLs every process, then drops the schema. Safe to call twice. */
  async stop(): Promise<void> {
    await Promise.all(this.all.map((p) => p.kill("SIGKILL")));
    await pgQuery(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`, [], this.options.pgUrl).catch(() => {});
  }
}

/** One HTTP request as the balancer passed it on. */
export interface Routed {
  /** Index of the front node it went to. */
  node: number;
  httpMethod: string;
  /** The POSTed JSON-RPC message, parsed (undefined for GET/DELETE). */
  body: { id?: string | number; method?: string; result?: unknown; error?: unknown; params?: Record<string, unknown> } | undefined;
  status: number;
}

/**
 * A load balancer without sticky sessions, as a `fetch` for the SDK client transport: every HTTP
 * request (initialize, notifications, the GET stream, tasks/*, the client's responses to server
 * requests) goes to the next front node in turn, the URL's host:port rewritten. A test may route
 * chosen requests to a chosen node (`route`) to make a cross-node path certain rather than likely;
 * every request is recorded with the node it went to.
 */
export class Balancer {
  /** Where the SDK client is pointed; the host is replaced on every request. */
  readonly url = "http://balancer.invalid/mcp";
  readonly log = new Recorder<Routed>();
  /** Every request as it is forwarded, before its response (a blocked tasks/result answers late). */
  readonly forwarded = new Recorder<Omit<Routed, "status">>();
  /** Returns the node for a request, or undefined for plain round robin. */
  route: ((request: Omit<Routed, "node" | "status">) => number | undefined) | undefined;
  private turn = 0;

  constructor(private readonly urls: readonly string[]) {}

  readonly fetch: FetchLike = async (url, init) => {
    const httpMethod = init?.method ?? "GET";
    let body: Routed["body"];
    if (typeof init?.body === "string") {
      try {
        body = JSON.parse(init.body) as Routed["body"];
      } catch {
        body = undefined;
      }
    }
    const chosen = this.route?.({ httpMethod, body });
    const node = chosen ?? this.turn++ % this.urls.length;
    const target = new URL(url);
    const front = new URL(this.urls[node] ?? "");
    target.protocol = front.protocol;
    target.host = front.host;
    this.forwarded.push({ node, httpMethod, body });
    const response = await fetch(target, init);
    this.log.push({ node, httpMethod, body, status: response.status });
    return response;
  };

  /** The requests routed so far that match. */
  where(match: (r: Routed) => boolean): Routed[] {
    return this.log.filter(match);
  }
}

/** The JSON-RPC method of a routed POST, or "response" for the client's answer to a server request. */
export function rpcKind(r: Pick<Routed, "body">): string | undefined {
  if (!r.body) return undefined;
  if (r.body.method !== undefined) return r.body.method;
  return "result" in r.body || "error" in r.body ? "response" : undefined;
}

/** A {@link Balancer} route by JSON-RPC method (`"response"` for the client's answers); anything else round-robins. */
export function byMethod(table: Record<string, number>): (r: Omit<Routed, "node" | "status">) => number | undefined {
  return (r) => {
    const kind = rpcKind(r);
    return kind === undefined ? undefined : table[kind];
  };
}
