/** The nearest-rank percentile of ascending `sorted`; NaN when it is empty. */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? NaN;
}

export interface Spread {
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  n: number;
}

/** p50, p95, p99, min and max of some samples in any order (NaN where there are none). */
export function spread(samples: readonly number[]): Spread {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    n: sorted.length,
  };
}
