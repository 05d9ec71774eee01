import { Command } from "commander";
import { openBackend } from "./backend.js";
import { startApp } from "./start-app.js";
import { createLogger } from "./logger.js";
import { maxQueuedInputsOption, maxResultBytesOption, type RunLimitFlags } from "./limit-options.js";
import { nonNegativeInt } from "./options.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { drainTimeoutOption, onStopSignals, type DrainFlags } from "./drain-options.js";

interface WorkerOptions extends RunLimitFlags, DrainFlags {
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
 * nodes (`serve`) answer the requestors.
 */
export function workerCommand(): Command {
  return new Command("worker")
    .description(COMMAND_SUMMARIES.worker.description)
    .requiredOption("--store <spec>", "the cluster's store: postgres://…[?schema=NAME]")
    .option("--concurrency <n>", "handlers run at once", nonNegativeInt, 8)
    .option("--lease-ms <ms>", "how long a claim lasts without renewal", nonNegativeInt, 30_000)
    .addOption(drainTimeoutOption())
    .addOption(maxQueuedInputsOption())
    .addOption(maxResultBytesOption())
    .option("--demo", "run the demo tools")
    .option("--tools <module>", "load tools from a module exporting default (app) => void")
    .option("--log-level <level>", "pino log level (logs go to stderr)", "info")
    .action(async (opts: WorkerOptions) => {
      await work(opts);
    });
}

async function work(opts: WorkerOptions): Promise<void> {
  const logger = createLogger(opts.logLevel);
  if (!opts.demo && !opts.tools) throw new Error("nothing to run: pass --demo and/or --tools MODULE");
  const backend = openBackend(opts.store, logger);
  if (!backend.shared) throw new Error("a worker needs a shared store: --store postgres://…");
  const { app, workerId } = await startApp("worker", backend, logger, opts, {
    maxQueuedInputs: opts.maxQueuedInputs,
    maxResultBytes: opts.maxResultBytes,
  });
  logger.info({ workerId, concurrency: opts.concurrency, tools: app.toolNames }, "worker started");

  onStopSignals(logger, async () => {
    logger.info({ workerId, drainTimeoutMs: opts.drainTimeout }, "worker shutting down: draining (a second signal stops at once)");
    // Claims stop now; what still runs after the grace period goes back to the queue for the
    // other workers instead of failing.
    await app.drain(opts.drainTimeout);
    await app.close();
    logger.flush();
    process.exit(0);
  });
}
