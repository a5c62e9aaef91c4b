/**
 * Calendar billing periods in UTC (SPEC 8). A period is identified as YYYYMM and ends at
 * the first instant of the next month.
 */

/** YYYYMM of the UTC month containing `nowMs`. */
export function periodOf(nowMs: number): string {
  const d = new Date(nowMs);
  const m = d.getUTCMonth() + 1;
  return `${d.getUTCFullYear()}${m < 10 ? "0" : ""}${m}`;
}

/** Epoch ms at which the period containing `nowMs` ends (start of the next UTC month). */
export function periodEndMs(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
