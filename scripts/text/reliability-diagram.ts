/**
 * Draws the reliability diagram of a probability model as a PNG: x = mean predicted probability
 * per bin, y = observed fraction of spam. Grey bars are each bin's observed fraction; red dots sit
 * at (mean prediction, observed fraction); the dashed diagonal is perfect calibration. The strip
 * under the plot shows how many test texts fall in each bin (bar height ~ log count).
 */
import type { Bin } from "./metrics.js";
import { Canvas, type Rgb } from "./png.js";

const AXIS: Rgb = [40, 40, 40];
const GRID: Rgb = [225, 225, 225];
const BAR: Rgb = [150, 180, 215];
const DOT: Rgb = [200, 30, 30];
const DIAG: Rgb = [90, 90, 90];

/** Renders `bins` into a PNG of size x size pixels (plus the count strip). */
export function drawReliabilityDiagram(bins: readonly Bin[], size = 400): Buffer {
  const left = 44, top = 16, plot = size - left - 16, stripH = 50;
  const height = top + plot + 30 + stripH + 10;
  const c = new Canvas(size, height);
  const X = (v: number) => left + v * plot;
  const Y = (v: number) => top + (1 - v) * plot;
  for (let k = 0; k <= 10; k++) {
    c.line(X(k / 10), Y(0), X(k / 10), Y(1), GRID);
    c.line(X(0), Y(k / 10), X(1), Y(k / 10), GRID);
  }
  for (const b of bins) if (b.count) c.rect(X(b.lo) + 2, Y(b.fracSpam), X(b.hi) - 2, Y(0) - 1, BAR);
  c.line(X(0), Y(0), X(1), Y(1), DIAG, 2, 6);
  c.line(X(0), Y(0), X(1), Y(0), AXIS, 2);
  c.line(X(0), Y(0), X(0), Y(1), AXIS, 2);
  for (const b of bins) if (b.count) c.disc(X(b.meanP), Y(b.fracSpam), 5, DOT);
  for (const [v, label] of [[0, "0"], [0.5, "0.5"], [1, "1"]] as const) {
    c.line(X(v), Y(0), X(v), Y(0) + 5, AXIS, 2);
    c.text(X(v) - (label.length * 8) / 2, Y(0) + 9, label, AXIS);
    c.line(X(0) - 5, Y(v), X(0), Y(v), AXIS, 2);
    c.text(X(0) - 8 - label.length * 8, Y(v) - 5, label, AXIS);
  }
  // Count strip.
  const stripTop = top + plot + 30;
  const maxLog = Math.max(1, ...bins.map((b) => Math.log10(1 + b.count)));
  c.line(X(0), stripTop + stripH, X(1), stripTop + stripH, AXIS);
  for (const b of bins) {
    if (!b.count) continue;
    const h = (Math.log10(1 + b.count) / maxLog) * stripH;
    c.rect(X(b.lo) + 2, stripTop + stripH - h, X(b.hi) - 2, stripTop + stripH - 1, DIAG);
  }
  return c.png();
}
