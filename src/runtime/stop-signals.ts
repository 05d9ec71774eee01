/**
 * How a process that serves tasks stops on SIGINT and SIGTERM (docs/deployment.md, "What happens when something fails"): the
 * first signal runs every registered stop — each drains its server: no new tasks, running
 * handlers get their grace period to finish, the rest are handed back, never failed — and when
 * all have ended the process exits 0 (1 when one of them failed). A second signal during the stop
 * exits at once (128 + the signal's number), leaving what still runs to the lease reaper (cluster)
 * or the next start's recovery (SQLite), as a crash would. Signals within {@link SAME_REQUEST_MS}
 * of the first are the same request: a terminal's Ctrl-C or a process manager signals the whole
 * process group, and npm, npx, sh and tsx relay it, so one Ctrl-C reaches the server several times
 * within milliseconds.
 *
 * One listener per signal for the whole process, however many servers register (a test file
 * starts dozens): it is installed with the first registration and removed with the last, so a
 * process whose servers are all closed stops on a signal as Node's default does.
 */
import { constants } from "node:os";
import type { Logger } from "../core/logger.js";

/** How long after the first stop signal another one still counts as the same request. */
export const SAME_REQUEST_MS = 1_000;

/** The logger a stop reports to; `flush` (pino's) is called before the process exits. */
export type StopLogger = Pick<Logger, "warn" | "error"> & { flush?: () => void };

/** A stop registered with {@link onStopSignals}. */
export interface StopRegistration {
  /** Stops the process as a first signal does (for other reasons to stop, e.g. stdin ended). */
  begin(): void;
  /** Forgets this stop (its server closed); the last one removed takes the signal listeners away. */
  remove(): void;
}

interface Registered {
  logger: StopLogger;
  stop: () => Promise<void>;
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;
const registered = new Set<Registered>();
let listening = false;
let stopping = false;
let firstSignalAt: number | null = null;
/** The stops the first signal ran: their servers may close (and unregister) before the exit. */
let running: Registered[] = [];

/**
 * Registers `stop` (which drains and closes one server) to run on the process's first SIGINT or
 * SIGTERM; the process exits once every registered stop has ended.
 */
export function onStopSignals(logger: StopLogger, stop: () => Promise<void>): StopRegistration {
  const entry: Registered = { logger, stop };
  registered.add(entry);
  listen();
  return {
    begin: beginStop,
    remove() {
      registered.delete(entry);
      // While stopping the listeners stay: a second signal still means "now".
      if (registered.size === 0 && !stopping) unlisten();
    },
  };
}

function onSignal(signal: (typeof SIGNALS)[number]): void {
  const at = performance.now();
  if (firstSignalAt !== null && at - firstSignalAt < SAME_REQUEST_MS) return;
  firstSignalAt ??= at;
  if (stopping) {
    for (const logger of loggers()) {
      logger.warn({ signal }, "second signal while draining: stopping now; tasks still running are left to recovery");
      logger.flush?.();
    }
    process.exit(128 + constants.signals[signal]);
  }
  beginStop();
}

function beginStop(): void {
  if (stopping) return;
  stopping = true;
  const stops = (running = [...registered]);
  void Promise.allSettled(stops.map((entry) => entry.stop())).then((outcomes) => {
    let code = 0;
    outcomes.forEach((outcome, index) => {
      if (outcome.status === "fulfilled") return;
      code = 1;
      stops[index]?.logger.error({ err: outcome.reason }, "stopping failed");
    });
    for (const logger of loggers()) logger.flush?.();
    process.exit(code);
  });
}

/** Each logger once (several servers of one process usually share one). */
function loggers(): Set<StopLogger> {
  return new Set([...(stopping ? running : registered)].map((entry) => entry.logger));
}

const listeners = new Map(SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const));

function listen(): void {
  if (listening) return;
  listening = true;
  for (const [signal, listener] of listeners) process.on(signal, listener);
}

function unlisten(): void {
  if (!listening) return;
  listening = false;
  for (const [signal, listener] of listeners) process.off(signal, listener);
}
