/**
 * The drain flags of `serve` and `worker`, and the exit of a server whose SQLite file is in use.
 * How a stop signal drains: src/runtime/stop-signals.ts (docs/deployment.md).
 */
import { Option } from "commander";
import { DEFAULT_DRAIN_GRACE_MS } from "../runtime/drain.js";
import { StoreInUseError } from "../store/writer-lock.js";
import { nonNegativeInt } from "./options.js";

/** `serve`'s exit code when its SQLite file is in use by another server (StoreInUseError). */
export const STORE_IN_USE_EXIT = 7;

export interface DrainFlags {
  drainTimeout: number;
}

export function drainTimeoutOption(): Option {
  return new Option(
    "--drain-timeout <ms>",
    "on SIGTERM/SIGINT: how long running tasks get to finish before they are handed back (a second signal stops at once)",
  )
    .argParser(nonNegativeInt)
    .default(DEFAULT_DRAIN_GRACE_MS);
}

/** Exits with {@link STORE_IN_USE_EXIT} and the error's message (which names the file) for a store in use; returns otherwise. */
export function exitIfStoreInUse(error: unknown): void {
  if (!(error instanceof StoreInUseError)) return;
  process.stderr.write(`mcp-tasks: ${error.message}\n`);
  process.exit(STORE_IN_USE_EXIT);
}
