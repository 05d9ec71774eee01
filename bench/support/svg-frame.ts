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
