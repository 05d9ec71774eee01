import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { registerDemoTools } from "../demo/demo-tools.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../mcp/task-server.js";
import type { Logger } from "../core/logger.js";
import { TaskMetrics } from "../metrics/task-metrics.js";
import type { Backend } from "./backend.js";
import { loadToolsModule } from "./load-tools.js";

/** What `serve` and `worker` share: the tools to load, and how a process runs handlers in a cluster. */
export interface AppFlags {
  demo?: boolean;
  tools?: string;
  /** Handlers run at once by this process (a cluster's `--workers` / `--concurrency`). */
  concurrency: number;
  leaseMs: number;
  /** Registers more tools before the server starts (the gateway's mirrored ones). */
  register?: (app: TaskServer) => Promise<void>;
}

/**
 * The task server of a `serve` or `worker` process on its backend, with its tools loaded and
 * started: in a cluster (a shared store) it runs handlers under a lease in the name of a worker
 * id unique to the process, and it hears the other nodes before the caller takes any work —
 * a wake-up sent before that would be missed.
 */
export async function startApp(
  role: "serve" | "worker",
  backend: Backend,
  logger: Logger,
  flags: AppFlags,
  options: Omit<TaskServerOptions, "name" | "version" | "store" | "bus" | "logger" | "cluster" | "metrics"> = {},
): Promise<{ app: TaskServer; workerId: string | null }> {
  const workerId = backend.shared ? `${role}-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}` : null;
  const app = createTaskServer({
    name: "mcp-tasks",
    version: "0.1.0",
    store: backend.store,
    bus: backend.bus,
    logger,
    // The CLI always has metrics: `serve` exposes them at /metrics.
    metrics: new TaskMetrics(),
    // A worker process only runs handlers, so it may stop listening while it stands by idle; a
    // `serve` node's waiters and streams need every event.
    ...(workerId !== null && {
      cluster: { workerId, concurrency: flags.concurrency, leaseMs: flags.leaseMs, workerOnly: role === "worker" },
    }),
    ...options,
  });
  if (flags.demo) registerDemoTools(app);
  if (flags.tools) await loadToolsModule(app, flags.tools);
  // Before start: interrupted tasks are recovered at start, and need their tools.
  if (flags.register) await flags.register(app);
  await app.start();
  await backend.ready;
  return { app, workerId };
}
