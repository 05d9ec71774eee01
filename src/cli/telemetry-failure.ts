import { createLogger } from "./logger.js";

/** Where failed exports are told: a server's log at the first failure, or one line on stderr when a one-shot command exits. */
export type FailureReporting = "at-once" | "at-exit";

export interface ExportFailureReport {
  /** An export (or another task of the SDK) failed. */
  failed(error: unknown): void;
  /** The process is about to exit: a one-shot command tells the first failure now. */
  exiting(): void;
}

/**
 * Tells that telemetry could not be exported — once per process, however many spans, batches or
 * retries failed: an unreachable collector otherwise fails silently, or would fill the log with
 * one line per batch. A server (`at-once`) logs one warning line, as its other log lines, at the
 * first failure; a one-shot command (`at-exit`) writes one line on stderr as it exits, after its
 * output, so the line never lands inside a progress bar or a prompt.
 */
export function exportFailureReport(reporting: FailureReporting, env: NodeJS.ProcessEnv): ExportFailureReport {
  const endpoint = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim() || env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim() || null;
  let first: string | null = null;
  let told = false;
  const tell = (): void => {
    if (told || first === null) return;
    told = true;
    const where = endpoint === null ? "" : ` to ${endpoint}`;
    if (reporting === "at-once") {
      createLogger("warn").warn(
        { endpoint, error: first },
        `telemetry could not be exported${where}: ${first}; later export failures are not logged`,
      );
    } else {
      process.stderr.write(`mcp-tasks: telemetry could not be exported${where}: ${first}; it was dropped\n`);
    }
  };
  return {
    failed(error) {
      first ??= reasonOf(error);
      if (reporting === "at-once") tell();
    },
    exiting: tell,
  };
}

/** An export error's words: its message, with the network cause Node's fetch hides behind it. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === "string" && !error.message.includes(code) ? `${error.message} (${code})` : error.message || error.name;
}
