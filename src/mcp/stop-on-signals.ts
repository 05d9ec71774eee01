import { onStopSignals, type StopRegistration } from "../runtime/stop-signals.js";
import type { Logger } from "../core/logger.js";

/** What a stop needs of a server (a TaskServer). */
export interface DrainableServer {
  readonly engine: { readonly logger: Logger };
  drain(graceMs: number): Promise<unknown>;
  close(): Promise<void>;
}

/** How a server stopped by a signal closes, beside the drain (see {@link drainAndClose}). */
export interface StopSteps {
  /** How long running handlers get to finish before they are handed back (ms). */
  drainTimeoutMs: number;
  /** After the drain, before the server closes: stop accepting connections. */
  stopAccepting?: () => void;
  /** After the server closed: what else to close (its HTTP connections, the caller's own). */
  closeAfter?: () => Promise<void>;
}

/**
 * The stop of `mcp-tasks serve`, `serveHttp` and a stdio server alike: drain while still serving
 * (requestors keep reading and cancelling their tasks, new ones are refused, /readyz says
 * "draining"), then stop accepting, let the engine answer what is waiting, and close.
 */
export async function drainAndClose(app: DrainableServer, steps: StopSteps): Promise<void> {
  app.engine.logger.info({ drainTimeoutMs: steps.drainTimeoutMs }, "shutting down: draining (a second signal stops at once)");
  await app.drain(steps.drainTimeoutMs);
  steps.stopAccepting?.();
  await app.close();
  await steps.closeAfter?.();
}

/** Drains and closes `app` on the process's first SIGINT or SIGTERM, then the process exits (runtime/stop-signals.ts). */
export function stopOnSignals(app: DrainableServer, steps: StopSteps): StopRegistration {
  return onStopSignals(app.engine.logger, () => drainAndClose(app, steps));
}
