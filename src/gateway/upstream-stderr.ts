import type { Readable } from "node:stream";
import type { Logger } from "../core/logger.js";

/** How much of a stdio upstream's stderr reaches the gateway's log. */
export interface UpstreamStderrLimits {
  /** Characters of one line kept; the rest is dropped, and the line says how many (`truncatedChars`). */
  maxLineChars: number;
  /** Lines logged at once after a quiet spell. */
  burstLines: number;
  /** Lines logged per second, sustained; lines beyond are dropped and counted. */
  linesPerSecond: number;
}

/** At most about 20 lines of 4 KiB a second (80 KiB/s) per upstream process, after a burst of 100. */
export const UPSTREAM_STDERR_LIMITS: UpstreamStderrLimits = { maxLineChars: 4096, burstLines: 100, linesPerSecond: 20 };

/** How often the count of dropped lines is logged while lines are being dropped (ms). */
const DROP_REPORT_MS = 1000;

/**
 * A stdio upstream's stderr as the gateway's own log lines: each line of it is the `line` field
 * of an info line `{ msg: "upstream stderr", upstream, line }`, never a raw line on the gateway's
 * stderr — an upstream writing text that reads as one of the gateway's lines (an audit line, say)
 * lands inside that field, JSON-escaped, where no log reader takes it for the gateway's.
 *
 * Bounded whatever the upstream writes: a line is cut at `maxLineChars` (what is left of it until
 * the next newline is read and dropped, never held), and lines beyond a token bucket
 * (`burstLines`, refilled at `linesPerSecond`) are dropped; a warning says how many, once a second
 * while it lasts. One bucket per upstream connection, shared by the processes of its restarts. Blank
 * lines are skipped.
 */
export class UpstreamStderr {
  private tokens: number;
  private refilledAt = Date.now();
  private dropped = 0;
  private reportTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly upstream: string,
    private readonly limits: UpstreamStderrLimits = UPSTREAM_STDERR_LIMITS,
  ) {
    this.tokens = limits.burstLines;
  }

  /** Reads `stream` (one process's stderr) to its end, line by line. */
  read(stream: Readable): void {
    stream.setEncoding("utf8");
    let line = "";
    let cut = 0;
    const take = (piece: string): void => {
      const room = this.limits.maxLineChars - line.length;
      if (piece.length <= room) line += piece;
      else {
        line += piece.slice(0, room);
        cut += piece.length - room;
      }
    };
    const end = (): void => {
      this.line(line, cut);
      line = "";
      cut = 0;
    };
    stream.on("data", (chunk: string) => {
      let start = 0;
      for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
        take(chunk.slice(start, newline));
        end();
        start = newline + 1;
      }
      take(chunk.slice(start));
    });
    stream.on("end", end);
    // A stream error (the pipe broke) ends what can be read; the connection reports the process's end.
    stream.on("error", () => {});
  }

  private line(text: string, cut: number): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.trim() === "" && cut === 0) return;
    if (!this.take()) {
      this.dropped++;
      this.reportTimer ??= setTimeout(() => this.reportDropped(), DROP_REPORT_MS).unref();
      return;
    }
    this.logger.info({ upstream: this.upstream, line, ...(cut > 0 && { truncatedChars: cut }) }, "upstream stderr");
  }

  private take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.limits.burstLines, this.tokens + ((now - this.refilledAt) / 1000) * this.limits.linesPerSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  private reportDropped(): void {
    this.reportTimer = null;
    if (this.dropped === 0) return;
    this.logger.warn(
      { upstream: this.upstream, dropped: this.dropped, linesPerSecond: this.limits.linesPerSecond, burstLines: this.limits.burstLines },
      "upstream stderr lines dropped: the upstream wrote more than the gateway logs",
    );
    this.dropped = 0;
  }
}
