/**
 * A process's resident set size, sampled at a fixed interval from /proc (Linux), for the soak
 * scenario: is memory flat under steady load?
 *
 * "Flat" is judged on the envelope, not on two samples: a Node server's RSS under steady load
 * swings by tens of MiB as V8 grows and gives back its committed heap between collections.
 * Measured for `serve --demo` on SQLite under the soak's load (8 loops): RSS 170–270 MiB through
 * tsx, 145–220 MiB from dist/; the V8 heap's committed size moved 70–145 MiB with it, while the
 * rest (RSS − committed heap − external) grew from 53 to 71 MiB in the first 90 s (compiled code,
 * SQLite's page cache) and then stayed at 70–73 MiB, with MALLOC_ARENA_MAX=2 or without. So the
 * first and the last sample say more about where each fell in that swing than about a leak. A
 * leak climbs: the second half's peak ends above the first half's. A plateau's second half peaks
 * where the first did.
 */
import { readFileSync } from "node:fs";

/** VmRSS of `pid` in bytes. */
export function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

export interface RssSummary {
  samples: number[];
  first: number;
  last: number;
  max: number;
  /** The highest sample of the first half and of the second half (by count). */
  firstHalfMax: number;
  secondHalfMax: number;
  /** Least-squares slope of the second half, in bytes per minute (NaN with fewer than 2 samples there). */
  secondHalfSlopePerMin: number;
  /** secondHalfMax ≤ firstHalfMax × (1 + tolerance) */
  flat: boolean;
  tolerance: number;
}

/**
 * How far the second half's peak may rise above the first half's and still count as flat: 10 %
 * is about 25 MiB on the ~250 MiB peaks measured, above the swing between one half's peak and the
 * other's on a plateau (a few MiB), and what a leak of ≥ 1.7 MiB/min adds over the 15-minute
 * second half of the 30-minute soak.
 */
export const RSS_TOLERANCE = 0.1;

/** Samples a minute-or-so run takes before a half holds several collection cycles: below it the verdict is only indicative. */
export const MIN_SAMPLES_TO_JUDGE = 12;

export function summarize(samples: readonly number[], everyMs: number, tolerance = RSS_TOLERANCE): RssSummary {
  const half = Math.floor(samples.length / 2);
  const firstHalf = samples.slice(0, Math.max(1, half));
  const secondHalf = samples.slice(half);
  const firstHalfMax = Math.max(...firstHalf);
  const secondHalfMax = Math.max(...secondHalf);
  return {
    samples: [...samples],
    first: samples[0] ?? 0,
    last: samples[samples.length - 1] ?? 0,
    max: Math.max(...samples),
    firstHalfMax,
    secondHalfMax,
    secondHalfSlopePerMin: slope(secondHalf) * (60_000 / everyMs),
    flat: secondHalfMax <= firstHalfMax * (1 + tolerance),
    tolerance,
  };
}

/** Least-squares slope of `ys` against their index. */
function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return NaN;
  const meanX = (n - 1) / 2;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return num / den;
}

export class RssSampler {
  readonly samples: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 10_000,
  ) {}

  start(): this {
    this.samples.push(rssOf(this.pid));
    this.timer = setInterval(() => this.samples.push(rssOf(this.pid)), this.everyMs);
    return this;
  }

  stop(): RssSummary {
    clearInterval(this.timer);
    this.samples.push(rssOf(this.pid));
    return summarize(this.samples, this.everyMs);
  }
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** One line for a report: the envelope of both halves, the late slope and the verdict. */
export function describeRss(summary: RssSummary, everyMs: number): string {
  const judged = summary.samples.length >= MIN_SAMPLES_TO_JUDGE;
  const verdict = summary.flat ? "flat" : "NOT flat";
  return (
    `RSS every ${everyMs / 1000} s (${summary.samples.length} samples): first ${mib(summary.first)}, last ${mib(summary.last)}, max ${mib(summary.max)}; ` +
    `peak of the first half ${mib(summary.firstHalfMax)}, of the second ${mib(summary.secondHalfMax)}, second-half slope ${(summary.secondHalfSlopePerMin / 2 ** 20).toFixed(2)} MiB/min: ` +
    `${judged ? verdict : `${verdict}, but too short to judge (< ${MIN_SAMPLES_TO_JUDGE} samples)`} (second-half peak within +${summary.tolerance * 100} % of the first's)`
  );
}
