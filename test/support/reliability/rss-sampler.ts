/**
 * A process's resident set size, sampled at a fixed interval from /proc (Linux), for the soak
 * scenario: is memory flat under steady load?
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
  /** last ≤ first × (1 + tolerance) */
  flat: boolean;
  tolerance: number;
}

/** Growth from the first sample to the last that still counts as flat. */
export const RSS_TOLERANCE = 0.25;

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
    const first = this.samples[0] ?? 0;
    const last = this.samples[this.samples.length - 1] ?? 0;
    return { samples: [...this.samples], first, last, max: Math.max(...this.samples), flat: last <= first * (1 + RSS_TOLERANCE), tolerance: RSS_TOLERANCE };
  }
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
