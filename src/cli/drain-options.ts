/**
 * How `serve` and `worker` stop (docs/deployment.md): the first SIGTERM
 * or SIGINT drains — no new tasks, running handlers get `--drain-timeout` ms to finish, the rest
 * are handed back, never failed — and then the process exits 0; a second signal during the
 * drain exits at once (128 + the signal's number), leaving what still runs to the lease reaper
 * (cluster) or the next start's recovery (SQLite), as a crash would. Signals within
 * {@link SAME_REQUEST_MS} of the first are the same request: a terminal's Ctrl-C or a process
 * manager signals the whole process group, and npm, sh and tsx relay it, so one Ctrl-C reaches
 * the server several times within milliseconds.
 */
import { Option } from "commander";
import { constants } from "node:os";
import type { Logger } from "../core/logger.js";
import { DEFAULT_DRAIN_GRACE_MS } from "../runtime/drain.js";
import { StoreInUseError } from "../store/writer-lock.js";
import { nonNegativeInt } from "./options.js";

/** `serve`'s exit code when its SQLite file is in use by another server (StoreInUseError). */
export const STORE_IN_USE_EXIT = 7;

/** How long after the first stop signal another one still counts as the same request. */
export const SAME_REQUEST_MS = 1_000;

export interface DrainFlags {
  drainTimeout: number;
}

export function drainTimeoutOption(): Option {
  return new Option("--drain-timeout <ms>", "on SIGTERM/SIGINT: how long running tasks get to finish before they are handed back (a second signal stops at once)")
    .argParser(nonNegativeInt)
    .default(DEFAULT_DRAIN_GRACE_MS);
}

/**
 * Calls `stop` on the first SIGINT or SIGTERM, and exits at once on one that comes later than
 * {@link SAME_REQUEST_MS} after it (those sooner are the same request, ignored). `stop` drains
 * and exits the process itself. Returns the same first step for other reasons to stop (stdin
 * ended), after which a signal exits at once too.
 */
export function onStopSignals(logger: Pick<Logger, "warn"> & { flush?: () => void }, stop: () => Promise<void>): () => void {
  let stopping = false;
  let firstSignalAt: number | null = null;
  const begin = (): void => {
    if (stopping) return;
    stopping = true;
    void stop();
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      const at = performance.now();
      if (firstSignalAt !== null && at - firstSignalAt < SAME_REQUEST_MS) return;
      firstSignalAt ??= at;
      if (stopping) {
        logger.warn({ signal }, "second signal while draining: stopping now; tasks still running are left to recovery");
        logger.flush?.();
        process.exit(128 + constants.signals[signal]);
      }
      begin();
    });
  }
  return begin;
}

/** Exits with {@link STORE_IN_USE_EXIT} and the error's message (which names the file) for a store in use; returns otherwise. */
export function exitIfStoreInUse(error: unknown): void {
  if (!(error instanceof StoreInUseError)) return;
  process.stderr.write(`mcp-tasks: ${error.message}\n`);
  process.exit(STORE_IN_USE_EXIT);
}
