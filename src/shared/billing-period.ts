import { periodEndMs, periodOf } from "./period.js";

/** What an org record says about its billing period (set from Stripe for subscribed orgs). */
export interface BillingPeriodSource {
  /** Epoch ms; both null for orgs without a subscription (calendar months). */
  billing_period_start?: number | null;
  billing_period_end?: number | null;
}

/** The usage period an org is in: its ledger key, its YYYYMM label, and when it ends. */
export interface UsagePeriod {
  /** Ledger key part: YYYYMM for calendar months, `b<start in seconds>` for a Stripe billing period. */
  id: string;
  /** YYYYMM of the period's start (the usage record's `period`; docs/api.md, "GET /v1/orgs/{orgId}/usage"). */
  label: string;
  /** Epoch ms at which the period began. */
  start: number;
  /** Epoch ms at which usage resets. */
  end: number;
}

/**
 * A subscribed org's usage resets at Stripe's billing-period boundary, others' at the calendar
 * month. If the clock passes the period end before Stripe's renewal event arrives, the
 * next period is assumed to have the same length (the event then corrects it).
 */
export function usagePeriod(org: BillingPeriodSource, nowMs: number): UsagePeriod {
  let start = org.billing_period_start ?? null;
  let end = org.billing_period_end ?? null;
  if (start === null || end === null || end <= start || nowMs < start) {
    const id = periodOf(nowMs);
    const d = new Date(nowMs);
    return { id, label: id, start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: periodEndMs(nowMs) };
  }
  const length = end - start;
  if (nowMs >= end) {
    const skip = Math.floor((nowMs - end) / length) + 1;
    start += skip * length;
    end += skip * length;
  }
  return { id: `b${Math.floor(start / 1000)}`, label: periodOf(start), start, end };
}

/** Ledger period ids the charge journal accepts. */
export const PERIOD_ID = /^(\d{6}|b\d{1,12})$/;
