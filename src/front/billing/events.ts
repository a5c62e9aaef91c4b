import { z } from "zod";
import type { Plan } from "../../shared/plans.js";
import type { BillingEvent } from "../../store/records.js";
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

/** Longest id we accept from an event (Stripe's are far shorter); longer ones are refused, not stored. */
export const MAX_STRIPE_ID = 255;
const ID = /^[\x21-\x7e]+$/;

/**
 * Dates an event may carry (`created`, trial end, billing period bounds), in epoch seconds: from
 * 2000-01-01 to 10 years (3,653 days) after now. Stripe's are well inside; a date outside is
 * refused (400) rather than stored, since one far out of range cannot be turned into a date and
 * would fail the writer on every retry.
 */
export const EARLIEST_EVENT_DATE_S = 946_684_800;
export const LATEST_EVENT_DATE_AHEAD_S = 3_653 * 86_400;

/** The bounds of a date of an event received at `nowMs`. */
function dateBounds(nowMs: number): { min: number; max: number } {
  return { min: EARLIEST_EVENT_DATE_S, max: Math.floor(nowMs / 1000) + LATEST_EVENT_DATE_AHEAD_S };
}

const DATE_RANGE = "epoch seconds between 2000-01-01 and 10 years from now";

/**
 * The event envelope every verified event must have (`created` also within dateBounds); what
 * fails here is a 400 and is recorded nowhere.
 */
const envelopeSchema = z.object({
  id: z.string().min(1).max(MAX_STRIPE_ID).regex(ID, "printable ASCII without spaces"),
  type: z.string().min(1).max(100).regex(/^[a-z0-9_.]+$/, "lower-case letters, digits, '_' and '.'"),
  created: z.number().int(),
  data: z.object({ object: z.custom<Obj>(isObject, "an object") }),
});

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A field of the event that is present but not what Stripe sends there. */
class BadField extends Error {}

/** Reads the fields of `data.object` we use, refusing any that is present with the wrong shape. */
class FieldReader {
  constructor(
    private readonly base: string,
    private readonly dates: { min: number; max: number },
  ) {}

  object(v: unknown, path: string): Obj {
    if (v === undefined || v === null) return {};
    if (!isObject(v)) throw new BadField(`${this.base}.${path}: an object`);
    return v;
  }
  array(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new BadField(`${this.base}.${path}: an array`);
    return v;
  }
  text(v: unknown, path: string, max = 200): string | null {
    if (v === undefined || v === null || v === "") return null;
    if (typeof v !== "string" || v.length > max) throw new BadField(`${this.base}.${path}: a string of at most ${max} characters`);
    return v;
  }
  id(v: unknown, path: string): string | null {
    const text = this.text(v, path, MAX_STRIPE_ID);
    if (text !== null && !ID.test(text)) throw new BadField(`${this.base}.${path}: an id of printable characters`);
    return text;
  }
  /** An id, or an expanded object carrying one. */
  ref(v: unknown, path: string): string | null {
    return isObject(v) ? this.id(v.id, `${path}.id`) : this.id(v, path);
  }
  number(v: unknown, path: string): number | null {
    if (v === undefined || v === null) return null;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new BadField(`${this.base}.${path}: a number`);
    return v;
  }
  /** A date in epoch seconds, within the bounds (EARLIEST_EVENT_DATE_S, LATEST_EVENT_DATE_AHEAD_S). */
  date(v: unknown, path: string): number | null {
    const n = this.number(v, path);
    if (n !== null && (n < this.dates.min || n > this.dates.max)) throw new BadField(`${this.base}.${path}: ${DATE_RANGE}`);
    return n;
  }
}

/** A verified event reduced to what the writer applies, or why it cannot be. */
export type NormalizedEvent = { ok: true; event: BillingEvent } | { ok: false; message: string };

/**
 * Reduces a verified Stripe event to the fields the writer applies (pure). Plans come from the
 * subscription's price ids (our configured prices), or its `metadata.plan` as set at checkout.
 * The billing period is read from the subscription items, where this API version puts it.
 * An event whose envelope (id, type, created, data.object) or a field we read is missing where
 * required, of the wrong type, too long, or a date out of range (dateBounds of `nowMs`) is refused
 * with a message naming the field.
 */
export function normalizeEvent(raw: unknown, setup: Pick<BillingSetup, "prices">, nowMs: number): NormalizedEvent {
  const envelope = envelopeSchema.safeParse(raw);
  if (!envelope.success) {
    const issue = envelope.error.issues[0]!;
    const path = issue.path.join(".");
    return { ok: false, message: `body${path === "" ? "" : `.${path}`}: ${issue.message}` };
  }
  const event = envelope.data;
  const dates = dateBounds(nowMs);
  if (event.created < dates.min || event.created > dates.max) return { ok: false, message: `body.created: ${DATE_RANGE}` };
  const obj = event.data.object;
  const r = new FieldReader("body.data.object", dates);
  try {
    const metadata = r.object(obj.metadata, "metadata");
    const out: BillingEvent = {
      id: event.id,
      type: event.type,
      created: event.created,
      orgId: r.id(metadata.org_id, "metadata.org_id") ?? r.id(obj.client_reference_id, "client_reference_id"),
      customerId: r.ref(obj.customer, "customer"),
    };
    if (event.type === "checkout.session.completed") {
      out.checkout = { subscriptionId: r.ref(obj.subscription, "subscription") };
    } else if (event.type.startsWith("customer.subscription.")) {
      const items = r.array(r.object(obj.items, "items").data, "items.data").map((item, i) => r.object(item, `items.data.${i}`));
      const priceIds = items.map((item, i) => r.ref(item.price, `items.data.${i}.price`)).filter((p): p is string => p !== null);
      const starts = items.map((item, i) => r.date(item.current_period_start, `items.data.${i}.current_period_start`)).filter((n): n is number => n !== null);
      const ends = items.map((item, i) => r.date(item.current_period_end, `items.data.${i}.current_period_end`)).filter((n): n is number => n !== null);
      out.subscription = {
        id: r.id(obj.id, "id") ?? "",
        status: r.text(obj.status, "status", 40) ?? "incomplete",
        plan: planOf(priceIds, r.text(metadata.plan, "metadata.plan", 40), setup),
        trialEnd: r.date(obj.trial_end, "trial_end"),
        periodStart: starts.length ? Math.min(...starts) : null,
        periodEnd: ends.length ? Math.min(...ends) : null,
        cancelAtPeriodEnd: obj.cancel_at_period_end === true,
      };
    } else if (event.type.startsWith("invoice.")) {
      const details = r.object(r.object(obj.parent, "parent").subscription_details, "parent.subscription_details");
      out.invoice = { subscriptionId: r.ref(details.subscription, "parent.subscription_details.subscription") };
    }
    return { ok: true, event: out };
  } catch (err) {
    if (err instanceof BadField) return { ok: false, message: err.message };
    throw err;
  }
}

function planOf(priceIds: string[], metaPlan: string | null, setup: Pick<BillingSetup, "prices">): Plan | null {
  for (const plan of ["business", "pro"] as const) {
    const p = setup.prices[plan];
    if (priceIds.includes(p.monthly) || priceIds.includes(p.overage)) return plan;
  }
  return metaPlan === "pro" || metaPlan === "business" ? metaPlan : null;
}
