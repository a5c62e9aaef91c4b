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

/**
 * The same diagram as an SVG document (for the model card): bars = observed spam share per bin,
 * dots = (mean p, observed share), dashed diagonal = perfect calibration, and under the plot
 * each bin's text count (bar height ~ log count, the count written above it).
 */
export function reliabilitySvg(bins: readonly Bin[], title: string, size = 420): string {
  const left = 50, top = 30, plot = size - left - 20, stripH = 60;
  const height = top + plot + 40 + stripH + 24;
  const X = (v: number) => +(left + v * plot).toFixed(1);
  const Y = (v: number) => +(top + (1 - v) * plot).toFixed(1);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${height}" viewBox="0 0 ${size} ${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="${size / 2}" y="16" text-anchor="middle" font-size="13">${title}</text>`);
  for (let k = 0; k <= 10; k++) {
    out.push(`<line x1="${X(k / 10)}" y1="${Y(0)}" x2="${X(k / 10)}" y2="${Y(1)}" stroke="#e1e1e1"/>`);
    out.push(`<line x1="${X(0)}" y1="${Y(k / 10)}" x2="${X(1)}" y2="${Y(k / 10)}" stroke="#e1e1e1"/>`);
  }
  for (const b of bins) if (b.count) out.push(`<rect x="${X(b.lo) + 2}" y="${Y(b.fracSpam)}" width="${X(b.hi) - X(b.lo) - 4}" height="${+(Y(0) - Y(b.fracSpam)).toFixed(1)}" fill="#96b4d7"/>`);
  out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#5a5a5a" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(0)}" stroke="#282828" stroke-width="1.5"/>`);
  out.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(0)}" y2="${Y(1)}" stroke="#282828" stroke-width="1.5"/>`);
  for (const b of bins) if (b.count) out.push(`<circle cx="${X(b.meanP)}" cy="${Y(b.fracSpam)}" r="4.5" fill="#c81e1e"/>`);
  for (const v of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    out.push(`<text x="${X(v)}" y="${Y(0) + 15}" text-anchor="middle">${v}</text>`);
    out.push(`<text x="${X(0) - 6}" y="${Y(v) + 4}" text-anchor="end">${v}</text>`);
  }
  out.push(`<text x="${X(0.5)}" y="${Y(0) + 30}" text-anchor="middle">predicted probability of spam</text>`);
  out.push(`<text transform="translate(14 ${Y(0.5)}) rotate(-90)" text-anchor="middle">observed share of spam</text>`);
  const stripTop = top + plot + 40;
  const maxLog = Math.max(1, ...bins.map((b) => Math.log10(1 + b.count)));
  out.push(`<line x1="${X(0)}" y1="${stripTop + stripH}" x2="${X(1)}" y2="${stripTop + stripH}" stroke="#282828"/>`);
  for (const b of bins) {
    if (!b.count) continue;
    const h = +((Math.log10(1 + b.count) / maxLog) * (stripH - 12)).toFixed(1);
    out.push(`<rect x="${X(b.lo) + 2}" y="${+(stripTop + stripH - h).toFixed(1)}" width="${X(b.hi) - X(b.lo) - 4}" height="${h}" fill="#5a5a5a"/>`);
    out.push(`<text x="${X((b.lo + b.hi) / 2)}" y="${+(stripTop + stripH - h - 2).toFixed(1)}" text-anchor="middle" font-size="9">${b.count}</text>`);
  }
  out.push(`<text x="${X(0.5)}" y="${stripTop + stripH + 16}" text-anchor="middle">texts per bin (log scale)</text>`);
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}
