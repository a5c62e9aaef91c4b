import type { UsageDay } from "../store/records.js";
import { esc } from "./layout.js";

/** Every UTC day (YYYY-MM-DD) from the day of `startMs` to the day of `endMs` inclusive. */
export function daysBetween(startMs: number, endMs: number): string[] {
  const out: string[] = [];
  const d = new Date(startMs);
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  for (; t <= endMs && out.length < 400; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/**
 * Credits per day of the period as an inline SVG bar chart (no script): one bar per day from the
 * period's first day to its last, days to come left empty. The picture has a text alternative
 * (role img, title and desc) giving the total and the busiest day.
 */
export function creditsChart(period: { start: number; end: number }, days: UsageDay[], nowMs: number): string {
  const all = daysBetween(period.start, period.end - 1);
  const today = new Date(nowMs).toISOString().slice(0, 10);
  const byDay = new Map(days.map((d) => [d.day, d.credits]));
  const values = all.map((d) => byDay.get(d) ?? 0);
  const max = Math.max(1, ...values);
  const total = values.reduce((a, b) => a + b, 0);
  const busiest = values.indexOf(Math.max(...values));
  const W = 720, H = 220, left = 56, bottom = 34, top = 12, right = 8;
  const plotW = W - left - right, plotH = H - top - bottom;
  const step = plotW / all.length;
  const barW = Math.max(2, step * 0.7);
  const scale = niceMax(max);
  const y = (v: number): number => top + plotH - (v / scale) * plotH;
  const ticks = Number.isInteger(scale / 2) ? [0, scale / 2, scale] : [0, scale];
  const bars = all
    .map((d, i) => {
      const v = values[i]!;
      const x = left + i * step + (step - barW) / 2;
      const future = d > today;
      const h = Math.max(v > 0 ? 1 : 0, top + plotH - y(v));
      return `<rect x="${x.toFixed(1)}" y="${(top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${future ? "#d1d5db" : "#0b57d0"}"><title>${d}: ${v} credits</title></rect>`;
    })
    .join("");
  const grid = ticks
    .map((t) => `<line x1="${left}" x2="${W - right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#d1d5db"/><text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`)
    .join("");
  // Day labels: the first, every 7th (unless close to the end), the last.
  const last = all.length - 1;
  const labels = all
    .map((d, i) => (i === 0 || i === last || (i % 7 === 0 && last - i >= 4) ? `<text x="${(left + i * step + step / 2).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${d.slice(5)}</text>` : ""))
    .join("");
  const summary = total === 0
    ? `No credits used yet this period (${all[0]} to ${all[all.length - 1]}).`
    : `${total} credits used this period (${all[0]} to ${all[all.length - 1]}); the busiest day was ${all[busiest]} with ${values[busiest]} credits.`;
  return `<figure class="chart"><svg role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMinYMin meet">
<title id="chart-title">Credits per day this period</title><desc id="chart-desc">${esc(summary)}</desc>
${grid}${bars}${labels}<text x="${left}" y="${H - 2}">day (UTC, month-day)</text></svg>
<figcaption>${esc(summary)}</figcaption></figure>`;
}

/** A round axis maximum at or above `v` (1, 2 or 5 times a power of ten). */
export function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(1, v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(n: number): string {
  return n >= 10_000 ? `${Math.round(n / 1000)}k` : String(Math.round(n * 10) / 10);
}

/** One bar of a stacked chart: its label (a bucket's start) and its value per decision. */
export interface StackedPoint {
  start: string;
  allow: number;
  review: number;
  block: number;
}

/** The decisions of a stacked chart, bottom up, with their colours (contrast 4.5:1 or more on white) and legend names. */
const STACK: Array<{ key: "allow" | "review" | "block"; fill: string }> = [
  { key: "allow", fill: "#047857" },
  { key: "review", fill: "#b45309" },
  { key: "block", fill: "#b91c1c" },
];

/**
 * Counts per time bucket and decision as an inline SVG stacked bar chart (no script): allow at
 * the bottom, then review, then block; each bar segment has a tooltip, and the picture a text
 * alternative (total, per decision, busiest bucket). `id` keeps the title ids of several charts
 * on one page apart; `what` names the counted things ("hits", "checks").
 */
export function stackedChart(id: string, title: string, points: readonly StackedPoint[], bucket: "hour" | "day", what: string): string {
  const label = (start: string): string => (bucket === "day" ? start.slice(5, 10) : `${start.slice(5, 10)} ${start.slice(11, 13)}h`);
  const totals = points.map((p) => p.allow + p.review + p.block);
  const total = totals.reduce((a, b) => a + b, 0);
  const scale = niceMax(Math.max(1, ...totals));
  const W = 720, H = 220, left = 56, bottom = 34, top = 12, right = 8;
  const plotW = W - left - right, plotH = H - top - bottom;
  const step = plotW / Math.max(1, points.length);
  const barW = Math.max(1, step * 0.7);
  const y = (v: number): number => top + plotH - (v / scale) * plotH;
  const ticks = Number.isInteger(scale / 2) ? [0, scale / 2, scale] : [0, scale];
  const bars = points
    .map((p, i) => {
      const x = (left + i * step + (step - barW) / 2).toFixed(1);
      let base = 0;
      return STACK.map(({ key, fill }) => {
        const v = p[key];
        if (v === 0) return "";
        const h = Math.max(1, (v / scale) * plotH);
        const rect = `<rect x="${x}" y="${(y(base) - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${fill}"><title>${esc(label(p.start))}: ${v} ${key}</title></rect>`;
        base += v;
        return rect;
      }).join("");
    })
    .join("");
  const grid = ticks
    .map((t) => `<line x1="${left}" x2="${W - right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#d1d5db"/><text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`)
    .join("");
  const last = points.length - 1;
  const every = Math.max(1, Math.ceil(points.length / 8));
  const labels = points
    .map((p, i) => (i === 0 || i === last || (i % every === 0 && last - i >= every / 2) ? `<text x="${(left + i * step + step / 2).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${esc(label(p.start))}</text>` : ""))
    .join("");
  const legend = STACK.map(({ key, fill }, i) => `<rect x="${W - right - 210 + i * 70}" y="${top}" width="10" height="10" fill="${fill}"/><text x="${W - right - 196 + i * 70}" y="${top + 9}">${key}</text>`).join("");
  const busiest = totals.indexOf(Math.max(...totals));
  const sum = (k: "allow" | "review" | "block"): number => points.reduce((a, p) => a + p[k], 0);
  const summary =
    total === 0
      ? `No ${what} in this range.`
      : `${total} ${what}: ${sum("allow")} allowed, ${sum("review")} for review, ${sum("block")} blocked; the busiest ${bucket} began ${label(points[busiest]!.start)} (UTC) with ${totals[busiest]}.`;
  return `<figure class="chart"><svg role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMinYMin meet">
<title id="${id}-title">${esc(title)}</title><desc id="${id}-desc">${esc(summary)}</desc>
${grid}${bars}${labels}${legend}<text x="${left}" y="${H - 2}">${bucket === "day" ? "day (UTC, month-day)" : "hour (UTC, month-day hour)"}</text></svg>
<figcaption>${esc(summary)}</figcaption></figure>`;
}
