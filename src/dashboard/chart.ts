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
