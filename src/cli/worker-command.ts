import { Command } from "commander";
import { shutdownTelemetry } from "./telemetry.js";
import type { TaskServer } from "../mcp/task-server.js";
import { openBackend } from "./backend.js";
import { startApp } from "./start-app.js";
import { webhookOptions, webhooksFrom, type WebhookFlags } from "./webhook-options.js";
import { createLogger } from "./logger.js";
import {
  keepFinishedOption,
  rememberExpiredOption,
  maxQueuedInputsOption,
  maxResultBytesOption,
  maxRunningPerPrincipalOption,
  type FairShareFlags,
  type RetentionFlags,
  type RunLimitFlags,
} from "./limit-options.js";
import { nonNegativeInt } from "./options.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { drainTimeoutOption, type DrainFlags } from "./drain-options.js";
import { onStopSignals } from "../runtime/stop-signals.js";
import { attachGateway, type Gateway } from "../gateway/gateway.js";
import {
  gatewayConfigOf,
  namesUpstream,
  upstreamOf,
  upstreamOptions,
  upstreamRunOptionsOf,
  type UpstreamFlags,
} from "./upstream-options.js";

interface WorkerOptions extends RunLimitFlags, DrainFlags, UpstreamFlags, FairShareFlags, RetentionFlags, WebhookFlags {
  store: string;
  concurrency: number;
  leaseMs: number;
  demo?: boolean;
  tools?: string;
  logLevel: string;
}

/**
 * `mcp-tasks worker`: a process that only runs tasks. It claims queued tasks from the shared
 * store with a lease, runs their handlers, renews the leases and stores the outcomes; front
 * nodes (`serve`, `gateway`) answer the requestors. With the upstream flags it runs a gateway's
 * tasks: the handlers of a gateway's tools are calls to its upstream, so the worker connects to
 * the same upstream, with the same config, as the gateway fronts do.
 */
export function workerCommand(): Command {
  const command = new Command("worker")
    .description(COMMAND_SUMMARIES.worker.description)
    .requiredOption("--store <spec>", "the cluster's store: postgres://…[?schema=NAME]")
    .option("--concurrency <n>", "handlers run at once", nonNegativeInt, 8)
    .option("--lease-ms <ms>", "how long a claim lasts without renewal", nonNegativeInt, 30_000)
    .addOption(drainTimeoutOption())
    .addOption(maxQueuedInputsOption())
    .addOption(maxResultBytesOption())
    .addOption(keepFinishedOption())
    .addOption(rememberExpiredOption())
    .addOption(maxRunningPerPrincipalOption())
    .option("--demo", "run the demo tools")
    .option("--tools <module>", "load tools from a module exporting default (app) => void")
    .option("--log-level <level>", "log level: trace, debug, info, warn, error, fatal or silent (logs go to stderr)", "info");
  for (const option of webhookOptions()) command.addOption(option);
  return upstreamOptions(command).action(async (opts: WorkerOptions) => {
    await work(opts);
  });
}

async function work(opts: WorkerOptions): Promise<void> {
  const logger = createLogger(opts.logLevel);
  const gatewayFlags = namesUpstream(opts) || opts.config !== undefined || opts.upstreamHeader.length > 0;
  if (!opts.demo && !opts.tools && !gatewayFlags)
    throw new Error("nothing to run: pass --demo, --tools MODULE, or a gateway's --upstream-stdio COMMAND / --upstream-url URL");
  // Checked before anything is opened, as `gateway` does.
  const upstream = gatewayFlags ? upstreamOf(opts) : undefined;
  const config = gatewayFlags ? gatewayConfigOf(opts) : undefined;
  // Per-principal processes and roots hold on the workers, where a gateway's handlers run.
  const run = upstream && config ? upstreamRunOptionsOf(opts, config, upstream) : undefined;
  const webhooks = webhooksFrom(opts);
  const backend = openBackend(opts.store, logger);
  if (!backend.shared) throw new Error("a worker needs a shared store: --store postgres://…");
  let gateway: Gateway | undefined;
  const register =
    upstream && config
      ? async (app: TaskServer) => {
          gateway = await attachGateway(app, { upstream, config, logger, timeoutMs: opts.upstreamTimeout, ...run });
        }
      : undefined;
  const { app, workerId } = await startApp(
    "worker",
    backend,
    logger,
    { ...opts, ...(register && { register }) },
    {
      maxQueuedInputs: opts.maxQueuedInputs,
      maxResultBytes: opts.maxResultBytes,
      keepFinishedMs: opts.keepFinished,
      rememberExpiredMs: opts.rememberExpired,
      ...(opts.maxRunningPerPrincipal !== undefined && { maxRunningPerOwner: opts.maxRunningPerPrincipal }),
      ...(webhooks && { webhooks }),
    },
  );
  logger.info({ workerId, concurrency: opts.concurrency, tools: app.toolNames }, "worker started");

  // A worker listens on no port: its PostgreSQL connections are all that keep the process alive,
  // and the upkeep timers are unref'd. When every connection drops at once (a database restart, a
  // network cut) while no handler runs, the process would end quietly with code 0 in the middle
  // of reconnecting. It lives until it is told to stop.
  const alive = setInterval(() => {}, 2 ** 30);
  onStopSignals(logger, async () => {
    clearInterval(alive);
    logger.info({ workerId, drainTimeoutMs: opts.drainTimeout }, "worker shutting down: draining (a second signal stops at once)");
    // Claims stop now; what still runs after the grace period goes back to the queue for the
    // other workers instead of failing.
    await app.drain(opts.drainTimeout);
    await app.close();
    await gateway?.close();
    await shutdownTelemetry();
    logger.flush();
  });
}
