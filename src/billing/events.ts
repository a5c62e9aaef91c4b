import type Stripe from "stripe";
import type { Plan } from "../shared/plans.js";
import type { BillingEvent } from "../store/billing.js";
import type { BillingSetup } from "./stripe.js";

/** Event types the service acts on; others are acknowledged and recorded, changing nothing. */
export const HANDLED_EVENTS = [
  "checkout.session.completed",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.trial_will_end",
  "invoice.paid",
  "invoice.payment_failed",
] as const;

type Obj = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const idOf = (v: unknown): string | null => str(v) ?? (v && typeof v === "object" ? str((v as Obj).id) : null);

/**
 * Reduces a verified Stripe event to the fields the writer applies (pure). Plans come from the
 * subscription's price ids (our configured prices), or its `metadata.plan` as set at checkout.
 * The billing period is read from the subscription items, where this API version puts it.
 */
export function normalizeEvent(event: Stripe.Event, setup: Pick<BillingSetup, "prices">): BillingEvent {
  const obj = event.data.object as unknown as Obj;
  const metadata = (obj.metadata ?? {}) as Obj;
  const out: BillingEvent = {
    id: event.id,
    type: event.type,
    created: event.created,
    orgId: str(metadata.org_id) ?? str(obj.client_reference_id),
    customerId: idOf(obj.customer),
  };
  if (event.type === "checkout.session.completed") {
    out.checkout = { subscriptionId: idOf(obj.subscription) };
  } else if (event.type.startsWith("customer.subscription.")) {
    const items = (((obj.items ?? {}) as Obj).data ?? []) as Obj[];
    const priceIds = items.map((i) => idOf(i.price)).filter((p): p is string => p !== null);
    const starts = items.map((i) => num(i.current_period_start)).filter((n): n is number => n !== null);
    const ends = items.map((i) => num(i.current_period_end)).filter((n): n is number => n !== null);
    out.subscription = {
      id: str(obj.id) ?? "",
      status: str(obj.status) ?? "incomplete",
      plan: planOf(priceIds, str(metadata.plan), setup),
      trialEnd: num(obj.trial_end),
      periodStart: starts.length ? Math.min(...starts) : null,
      periodEnd: ends.length ? Math.min(...ends) : null,
      cancelAtPeriodEnd: obj.cancel_at_period_end === true,
    };
  } else if (event.type.startsWith("invoice.")) {
    const parent = (obj.parent ?? {}) as Obj;
    const details = (parent.subscription_details ?? {}) as Obj;
    out.invoice = { subscriptionId: idOf(details.subscription) };
  }
  return out;
}

function planOf(priceIds: string[], metaPlan: string | null, setup: Pick<BillingSetup, "prices">): Plan | null {
  for (const plan of ["business", "pro"] as const) {
    const p = setup.prices[plan];
    if (priceIds.includes(p.monthly) || priceIds.includes(p.overage)) return plan;
  }
  return metaPlan === "pro" || metaPlan === "business" ? metaPlan : null;
}
