/**
 * The soak's verdict on RSS (test/support/reliability/rss-sampler.ts): judged on the envelope of
 * each half, so a plateau that swings between collections is flat and a slow climb is not.
 */
import { describe, expect, it } from "vitest";
import { summarize } from "../support/reliability/rss-sampler.js";

const MiB = 2 ** 20;
/** A plateau at `base` swinging ±`swing` MiB with a period of 5 samples, plus `climb` MiB per sample. */
const series = (n: number, base: number, swing: number, climb: number): number[] =>
  Array.from({ length: n }, (_, i) => (base + swing * Math.sin((2 * Math.PI * i) / 5) + climb * i) * MiB);

describe("the soak's RSS verdict", () => {
  it("calls a plateau flat even when its last sample sits far above its first (where a swing happened to fall)", () => {
    const samples = series(180, 210, 40, 0);
    samples[0] = 170 * MiB; // the first sample in a trough
    samples[samples.length - 1] = 250 * MiB; // the last at a peak: +47 %
    const summary = summarize(samples, 10_000);
    expect(summary.flat).toBe(true);
    expect(Math.abs(summary.secondHalfSlopePerMin / MiB)).toBeLessThan(0.5);
  });

  it("calls a climb of 2 MiB a minute over 30 minutes (10 s samples) not flat, with that slope", () => {
    const summary = summarize(series(180, 210, 40, 2 / 6), 10_000);
    expect(summary.flat).toBe(false);
    expect(summary.secondHalfSlopePerMin / MiB).toBeCloseTo(2, 0);
  });
});
