/**
 * A small stacked bar chart as SVG text, written by hand like svg-chart.ts's line chart (no
 * charting dependency): one bar per configuration, each split into the parts it adds up from,
 * with dashed horizontal reference lines (a ceiling, a target).
 */
import { axes, escape, frame, opening } from "./svg-frame.js";

export interface BarSegment {
  /** The part's name, shown in the legend (the same names in the same order on every bar). */
  label: string;
  value: number;
}

export interface Bar {
  label: string;
  segments: readonly BarSegment[];
}

export interface StackedBarChart {
  title: string;
  yLabel: string;
  bars: readonly Bar[];
  /** Dashed horizontal lines, e.g. a ceiling and the target derived from it. */
  references?: ReadonlyArray<{ y: number; label: string }>;
  /** Digits after the point of the totals written above the bars. Default 2. */
  decimals?: number;
}

const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#17becf"];

/** The smallest of 1, 2, 2.5, 5 × a power of ten that is at least `raw`: round tick labels. */
function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
}

/** The chart as a standalone SVG document. */
export function stackedBarChartSvg(chart: StackedBarChart): string {
  const f = frame({ left: 64, right: 200, top: 44, bottom: 56 });
  const { left, top, plotW, plotH } = f;
  const decimals = chart.decimals ?? 2;
  const totals = chart.bars.map((bar) => bar.segments.reduce((sum, s) => sum + Math.max(0, s.value), 0));
  const highest = Math.max(1e-9, ...totals, ...(chart.references ?? []).map((r) => r.y));
  const step = niceStep(highest / 5);
  const ticks = Math.ceil((highest * 1.06) / step);
  const yMax = step * ticks;
  const py = (y: number): number => top + plotH - (y / yMax) * plotH;
  const slot = plotW / Math.max(1, chart.bars.length);
  const barW = Math.min(90, slot * 0.55);
  const legend = chart.bars[0]?.segments.map((s) => s.label) ?? [];

  const out: string[] = [];
  out.push(...opening(f, chart.title, 24));
  const tickDecimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  for (let i = 0; i <= ticks; i++) {
    const y = step * i;
    out.push(`<line x1="${left}" y1="${py(y).toFixed(1)}" x2="${left + plotW}" y2="${py(y).toFixed(1)}" stroke="#eee"/>`);
    out.push(
      `<text x="${left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${y.toFixed(tickDecimals + (step / 10 ** Math.floor(Math.log10(step)) === 2.5 ? 1 : 0))}</text>`,
    );
  }
  out.push(...axes(f));
  out.push(
    `<text x="18" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${top + plotH / 2})">${escape(chart.yLabel)}</text>`,
  );
  chart.bars.forEach((bar, i) => {
    const x = left + slot * i + (slot - barW) / 2;
    let base = 0;
    bar.segments.forEach((segment, j) => {
      const value = Math.max(0, segment.value);
      if (value === 0) return;
      const y0 = py(base);
      const y1 = py(base + value);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y1.toFixed(1)}" width="${barW.toFixed(1)}" height="${(y0 - y1).toFixed(1)}" fill="${COLORS[j % COLORS.length]}"><title>${escape(`${segment.label}: ${value.toFixed(decimals)}`)}</title></rect>`,
      );
      base += value;
    });
    out.push(
      `<text x="${(x + barW / 2).toFixed(1)}" y="${(py(base) - 5).toFixed(1)}" text-anchor="middle">${(totals[i] ?? 0).toFixed(decimals)}</text>`,
    );
    out.push(`<text x="${(x + barW / 2).toFixed(1)}" y="${top + plotH + 18}" text-anchor="middle">${escape(bar.label)}</text>`);
  });
  for (const reference of chart.references ?? []) {
    const y = py(reference.y).toFixed(1);
    out.push(`<line x1="${left}" y1="${y}" x2="${left + plotW}" y2="${y}" stroke="#666" stroke-dasharray="6 4"/>`);
    out.push(
      `<text x="${left + plotW - 4}" y="${(Number(y) - 4).toFixed(1)}" text-anchor="end" fill="#444">${escape(reference.label)}</text>`,
    );
  }
  if (legend.length > 1) {
    legend.forEach((label, j) => {
      const ly = top + 12 + j * 18;
      out.push(`<rect x="${left + plotW + 8}" y="${ly - 9}" width="12" height="12" fill="${COLORS[j % COLORS.length]}"/>`);
      out.push(`<text x="${left + plotW + 26}" y="${ly + 2}">${escape(label)}</text>`);
    });
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
