/** A small line chart as SVG text, written by hand so the benches need no charting dependency. */

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

const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const format = (n: number): string => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** The chart as a standalone SVG document. */
export function lineChartSvg(chart: LineChart): string {
  const width = 720;
  const height = 420;
  const left = 60;
  const right = 190;
  const top = 40;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const logs = chart.xs.map((x) => Math.log10(x));
  const xMin = Math.min(...logs);
  const xMax = Math.max(...logs);
  const all = chart.series.flatMap((s) => s.values.filter((v) => Number.isFinite(v)));
  const yMax = Math.max(1, ...all, chart.reference?.y ?? 0) * 1.1;
  const px = (x: number): number => left + (xMax === xMin ? 0 : ((Math.log10(x) - xMin) / (xMax - xMin)) * plotW);
  const py = (y: number): number => top + plotH - (y / yMax) * plotH;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escape(chart.title)}</text>`);
  // Axes and grid.
  out.push(`<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#333"/>`);
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
  out.push(`<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">${escape(chart.yLabel)}</text>`);
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
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")}"/>`);
    for (const [x, y] of points) out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = top + 10 + i * 18;
    out.push(`<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 34}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${left + plotW + 40}" y="${ly + 4}">${escape(series.label)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
