/** Plan tiers (docs/api.md, "Credits and quota"). */
export const PLANS = ["free", "pro", "business", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanRule {
  /** Included credits per period; null = unmetered (enterprise). */
  readonly monthlyQuota: number | null;
  /** true: calls past the quota get 429 QUOTA_EXCEEDED; false: served and counted as overage. */
  readonly hardStop: boolean;
}

/** Free 10,000 hard stop; pro 50,000 and business 300,000 with overage; enterprise exempt. */
export const PLAN_RULES: Readonly<Record<Plan, PlanRule>> = Object.freeze({
  free: { monthlyQuota: 10_000, hardStop: true },
  pro: { monthlyQuota: 50_000, hardStop: false },
  business: { monthlyQuota: 300_000, hardStop: false },
  enterprise: { monthlyQuota: null, hardStop: false },
});

/** Subscription statuses of the usage record. Free orgs are `active`. */
export const SUBSCRIPTION_STATUSES = ["active", "trialing", "past_due", "canceled", "incomplete"] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
