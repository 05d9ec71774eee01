/** Small charts as SVG text, written by hand so the benches need no charting dependency. */
import { axes, escape, frame, opening } from "./svg-frame.js";

export interface ChartSeries {
  label: string;
  /** One y value per x of the chart (NaN: no point). */
  values: readonly number[];
}

export interface LineChart {
  title: string;
  /** The x positions, drawn on a log-10 axis (task counts). */
  xs: readonly number[];
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
  /** A dashed horizontal reference line (e.g. the 1.5× bound). */
  reference?: { y: number; label: string };
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];

const format = (n: number): string => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** The chart as a standalone SVG document. */
export function lineChartSvg(chart: LineChart): string {
  const f = frame({ left: 60, right: 190, top: 40, bottom: 50 });
  const { height, left, top, plotW, plotH } = f;
  const logs = chart.xs.map((x) => Math.log10(x));
  const xMin = Math.min(...logs);
  const xMax = Math.max(...logs);
  const all = chart.series.flatMap((s) => s.values.filter((v) => Number.isFinite(v)));
  const yMax = Math.max(1, ...all, chart.reference?.y ?? 0) * 1.1;
  const px = (x: number): number => left + (xMax === xMin ? 0 : ((Math.log10(x) - xMin) / (xMax - xMin)) * plotW);
  const py = (y: number): number => top + plotH - (y / yMax) * plotH;

  const out: string[] = [];
  out.push(...opening(f, chart.title));
  // Axes and grid.
  out.push(...axes(f));
  for (const x of chart.xs) {
    out.push(`<line x1="${px(x)}" y1="${top}" x2="${px(x)}" y2="${top + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${px(x)}" y="${top + plotH + 16}" text-anchor="middle">${format(x)}</text>`);
  }
  const ticks = 5;
  for (let i = 0; i <= ticks; i++) {
    const y = (yMax / ticks) * i;
    out.push(`<line x1="${left}" y1="${py(y)}" x2="${left + plotW}" y2="${py(y)}" stroke="#eee"/>`);
    out.push(`<text x="${left - 6}" y="${py(y) + 4}" text-anchor="end">${y.toFixed(y < 10 ? 1 : 0)}</text>`);
  }
  out.push(`<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escape(chart.xLabel)}</text>`);
  out.push(
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">${escape(chart.yLabel)}</text>`,
  );
  if (chart.reference) {
    const y = py(chart.reference.y);
    out.push(`<line x1="${left}" y1="${y}" x2="${left + plotW}" y2="${y}" stroke="#999" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${left + plotW - 4}" y="${y - 4}" text-anchor="end" fill="#666">${escape(chart.reference.label)}</text>`);
  }
  // Series and legend.
  chart.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length] ?? "#000";
    const points = chart.xs.flatMap((x, j) => {
      const v = series.values[j];
      return v === undefined || !Number.isFinite(v) ? [] : [[px(x), py(v)] as const];
    });
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")}"/>`,
    );
    for (const [x, y] of points) out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = top + 10 + i * 18;
    out.push(`<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 34}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${left + plotW + 40}" y="${ly + 4}">${escape(series.label)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

export interface DistributionSeries {
  label: string;
  /** The samples, in any order (ms). */
  samples: readonly number[];
}

export interface DistributionChart {
  title: string;
  xLabel: string;
  series: readonly DistributionSeries[];
  /** A dashed vertical reference line (e.g. the 2 ms target). */
  reference?: { x: number; label: string };
}

/** At most this many points per curve: enough for a smooth line, small enough for a README. */
const MAX_POINTS = 240;

/**
 * Latency distributions as cumulative curves (the share of samples at or below each latency), on a
 * log-10 latency axis: several series a decade or three apart stay readable on one chart.
 */
export function distributionChartSvg(chart: DistributionChart): string {
  const f = frame({ left: 60, right: 230, top: 40, bottom: 50 });
  const { height, left, top, plotW, plotH } = f;
  const all = chart.series.flatMap((s) => s.samples.filter((v) => Number.isFinite(v) && v > 0));
  const lo = Math.floor(Math.log10(Math.min(...all, chart.reference?.x ?? Infinity)));
  const hi = Math.ceil(Math.log10(Math.max(...all, chart.reference?.x ?? 0)));
  const decades = Math.max(1, hi - lo);
  const px = (ms: number): number => left + ((Math.log10(ms) - lo) / decades) * plotW;
  const py = (share: number): number => top + plotH - share * plotH;

  const out: string[] = [];
  out.push(...opening(f, chart.title));
  out.push(...axes(f));
  for (let d = lo; d <= lo + decades; d++) {
    const x = px(10 ** d);
    out.push(`<line x1="${x.toFixed(1)}" y1="${top}" x2="${x.toFixed(1)}" y2="${top + plotH}" stroke="#eee"/>`);
    out.push(
      `<text x="${x.toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${10 ** d >= 1 ? String(10 ** d) : (10 ** d).toFixed(-d)}</text>`,
    );
  }
  for (const share of [0, 0.25, 0.5, 0.75, 0.95, 1]) {
    const y = py(share);
    out.push(
      `<line x1="${left}" y1="${y.toFixed(1)}" x2="${left + plotW}" y2="${y.toFixed(1)}" stroke="${share === 0.5 || share === 0.95 ? "#ddd" : "#eee"}"/>`,
    );
    out.push(
      `<text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${share === 0.95 ? "p95" : share === 0.5 ? "p50" : `${share * 100}%`}</text>`,
    );
  }
  out.push(`<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escape(chart.xLabel)}</text>`);
  out.push(
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">share of samples at or below</text>`,
  );
  if (chart.reference) {
    const x = px(chart.reference.x);
    out.push(`<line x1="${x.toFixed(1)}" y1="${top}" x2="${x.toFixed(1)}" y2="${top + plotH}" stroke="#999" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${(x + 4).toFixed(1)}" y="${top + 14}" fill="#666">${escape(chart.reference.label)}</text>`);
  }
  chart.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length] ?? "#000";
    const sorted = series.samples.filter((v) => Number.isFinite(v) && v > 0).sort((a, b) => a - b);
    const step = Math.max(1, Math.ceil(sorted.length / MAX_POINTS));
    const points: string[] = [];
    for (let k = 0; k < sorted.length; k += step) points.push(`${px(sorted[k]!).toFixed(1)},${py((k + 1) / sorted.length).toFixed(1)}`);
    if (sorted.length > 0) points.push(`${px(sorted[sorted.length - 1]!).toFixed(1)},${py(1).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(" ")}"/>`);
    const ly = top + 10 + i * 18;
    out.push(`<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 34}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${left + plotW + 40}" y="${ly + 4}">${escape(series.label)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
