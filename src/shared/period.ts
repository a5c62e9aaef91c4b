/**
 * Calendar billing periods in UTC. A period is identified as YYYYMM and ends at
 * the first instant of the next month.
 */

let cachedStart = 0;
let cachedEnd = 0;
let cachedPeriod = "";

/** YYYYMM of the UTC month containing `nowMs`. Called per metered request: the last month is cached. */
export function periodOf(nowMs: number): string {
  if (nowMs >= cachedStart && nowMs < cachedEnd) return cachedPeriod;
  const d = new Date(nowMs);
  cachedStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  cachedEnd = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  cachedPeriod = formatPeriod(d);
  return cachedPeriod;
}

function formatPeriod(d: Date): string {
  const m = d.getUTCMonth() + 1;
  return `${d.getUTCFullYear()}${m < 10 ? "0" : ""}${m}`;
}

/** Epoch ms at which the period containing `nowMs` ends (start of the next UTC month). */
export function periodEndMs(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
