import Stripe from "stripe";
import type { Config } from "../../config/index.js";
import type { Plan } from "../../shared/plans.js";

/**
 * The Stripe API version this code is written against, pinned: the SDK sends it on every call,
 * so a Stripe account's default version never changes what we read. In this version a
 * subscription's billing period lives on its items (`items.data[].current_period_end`), and an
 * invoice names its subscription under `parent.subscription_details.subscription`.
 */
export const STRIPE_API_VERSION = "2026-10-28.endive";

export type PaidPlan = Extract<Plan, "pro" | "business">;

/** Days of free trial per paid plan (docs/api.md, "Billing"). */
export const TRIAL_DAYS: Record<PaidPlan, number> = { pro: 14, business: 0 };

export interface BillingSetup {
  stripe: Stripe;
  /** Monthly and metered overage price per paid plan. */
  prices: Record<PaidPlan, { monthly: string; overage: string }>;
  webhookSecret: string | null;
  meterEventName: string;
  publicUrl: string | null;
}

/** The billing setup from the configuration, or null when Stripe is not configured. */
export function billingFromConfig(config: Config): BillingSetup | null {
  const c = config;
  if (!c.STRIPE_SECRET_KEY || !c.STRIPE_PRICE_PRO || !c.STRIPE_PRICE_PRO_OVERAGE || !c.STRIPE_PRICE_BUSINESS || !c.STRIPE_PRICE_BUSINESS_OVERAGE) return null;
  const stripe = new Stripe(c.STRIPE_SECRET_KEY, {
    apiVersion: STRIPE_API_VERSION as Stripe.LatestApiVersion,
    timeout: c.STRIPE_TIMEOUT_MS,
    maxNetworkRetries: 1,
    ...(c.STRIPE_API_HOST ? { host: c.STRIPE_API_HOST } : {}),
    ...(c.STRIPE_API_PORT !== undefined ? { port: c.STRIPE_API_PORT } : {}),
    ...(c.STRIPE_API_PROTOCOL ? { protocol: c.STRIPE_API_PROTOCOL } : {}),
    appInfo: { name: "fraudscore" },
  });
  return {
    stripe,
    prices: {
      pro: { monthly: c.STRIPE_PRICE_PRO, overage: c.STRIPE_PRICE_PRO_OVERAGE },
      business: { monthly: c.STRIPE_PRICE_BUSINESS, overage: c.STRIPE_PRICE_BUSINESS_OVERAGE },
    },
    webhookSecret: c.STRIPE_WEBHOOK_SECRET ?? null,
    meterEventName: c.STRIPE_METER_EVENT_NAME,
    publicUrl: c.FS_PUBLIC_URL ?? null,
  };
}
