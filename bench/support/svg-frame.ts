/** What every hand-written chart of the benches shares: a 720 × 420 canvas with margins round the plot, and SVG text escaping. */

export interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  /** The plot's width and height inside the margins. */
  plotW: number;
  plotH: number;
}

/** The canvas with the given margins (the legend sits in the right one). */
export function frame(margins: { left: number; right: number; top: number; bottom: number }): Frame {
  const width = 720;
  const height = 420;
  return { width, height, ...margins, plotW: width - margins.left - margins.right, plotH: height - margins.top - margins.bottom };
}

export const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The document's opening: the `<svg>` element, a white background and the title (at `titleY`). */
export function opening(f: Frame, title: string, titleY = 22): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${f.width}" height="${f.height}" fill="#fff"/>`,
    `<text x="${f.width / 2}" y="${titleY}" text-anchor="middle" font-size="15">${escape(title)}</text>`,
  ];
}

/** The x and y axes along the plot's bottom and left edges. */
export function axes(f: Frame): string[] {
  return [
    `<line x1="${f.left}" y1="${f.top + f.plotH}" x2="${f.left + f.plotW}" y2="${f.top + f.plotH}" stroke="#333"/>`,
    `<line x1="${f.left}" y1="${f.top}" x2="${f.left}" y2="${f.top + f.plotH}" stroke="#333"/>`,
  ];
}
