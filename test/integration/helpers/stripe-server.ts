import { randomBytes, randomUUID } from "node:crypto";
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/**
 * A local Stripe-compatible API server for tests, driven by the real `stripe` SDK pointed at it:
 *
 *   const fake = await startStripeServer();
 *   const stripe = new Stripe("sk_test_x", { host: "127.0.0.1", port: fake.port, protocol: "http",
 *     apiVersion: STRIPE_API_VERSION, maxNetworkRetries: 0 });
 *
 * It records every request (method, path, headers, parsed form body) and answers with objects shaped
 * as the Stripe API documents them for API version 2026-10-28.endive (ids with their real prefixes,
 * `object`, `created` in seconds, `livemode: false`). Faults (Stripe-shaped errors, hangs) can be
 * injected per request. Webhook helpers build events and sign them with the SDK's own
 * `webhooks.generateTestHeaderString`.
 *
 * Behaviour chosen where Stripe's is not fully documented (see the notes at each place):
 * - Idempotency-Key (POST only, scoped per Authorization header): a repeated key with the same method,
 *   path and body replays the first response (with `Idempotent-Replayed: true`); with different ones
 *   it answers 400 `idempotency_error`. Only 2xx answers are stored; injected faults are not stored
 *   (they model a failure in front of the API, so a retry with the same key reaches the endpoint).
 * - A duplicate meter event `identifier` answers 400 `invalid_request_error`/`resource_already_exists`
 *   and is not counted (Stripe documents that it enforces uniqueness, not the exact error).
 * - Customers and prices referenced by other calls are not checked for existence.
 */

/** The API version the installed SDK pins; the server answers in this version's shapes. */
export const STRIPE_API_VERSION = "2026-10-28.endive" as const;

/**
 * A parsed `application/x-www-form-urlencoded` body in Stripe's bracket notation. Leaves are the
 * strings the SDK sent (numbers and booleans arrive as text: `"14"`, `"true"`); `a[0][b]` becomes
 * arrays of objects. Typed loosely on purpose so tests can index into it.
 */
export type FormBody = Record<string, any>;

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string, e.g. `/v1/customers`. */
  path: string;
  /** The query string parsed like a body (`expand[0]=x` etc.). */
  query: FormBody;
  /** Node's lower-cased headers, e.g. `headers.authorization`, `headers["idempotency-key"]`. */
  headers: IncomingHttpHeaders;
  /** `Authorization` header value (e.g. `Bearer sk_test_...`), if any. */
  authorization: string | undefined;
  /** `Idempotency-Key` header value, if any (the SDK sends one on every POST). */
  idempotencyKey: string | undefined;
  /** `Stripe-Version` header value, if any. */
  stripeVersion: string | undefined;
  rawBody: string;
  body: FormBody;
  /** What the server did: answered with this status, or hung (`"hang"`). */
  outcome: number | "hang" | undefined;
  /** `Date.now()` at arrival. */
  at: number;
}

/** Which requests a fault applies to. Both parts are optional; unset matches everything. */
export interface RequestFilter {
  /** HTTP method, case-insensitive. */
  method?: string;
  /** Path prefix, e.g. `/v1/billing/meter_events` or `/v1/checkout`. */
  path?: string;
}

/** A Stripe-shaped error to answer with, plus an optional filter. */
export interface FaultSpec extends RequestFilter {
  /** HTTP status (500, 429, 402, 400, 401, 403, 404, 409, 503...). */
  status: number;
  /** `error.type`; defaults by status (500+: `api_error`, 402: `card_error`, else `invalid_request_error`). */
  type?: string;
  /** `error.code`; defaults by status (429: `rate_limit`, 402: `card_declined`, 404: `resource_missing`). */
  code?: string;
  message?: string;
  /** `error.decline_code` (card errors). */
  declineCode?: string;
  /** `error.param`. */
  param?: string;
  /** Sends `Stripe-Should-Retry: true|false`, which the SDK honours when it has retries left. */
  shouldRetry?: boolean;
}

/** A price the server knows the amount of (used for checkout amounts and subscriptions it creates). */
export interface PriceInfo {
  unitAmount?: number;
  currency?: string;
  interval?: "day" | "week" | "month" | "year";
  /** A metered (usage-based) price: `recurring.usage_type: "metered"`, items carry no quantity. */
  metered?: boolean;
  product?: string;
  lookupKey?: string;
}

export interface StripeServerOptions {
  /** Known prices by id; unknown price ids are still accepted (amount 0, monthly, licensed). */
  prices?: Record<string, PriceInfo>;
}

/** A meter event the server accepted (duplicates are not here). */
export interface AcceptedMeterEvent {
  object: "billing.meter_event";
  created: number;
  event_name: string;
  identifier: string;
  livemode: false;
  payload: Record<string, string>;
  timestamp: number;
}

/** A stored Checkout Session and what was asked for when it was created. */
export interface StoredCheckoutSession {
  session: Stripe.Checkout.Session;
  /** The create parameters as parsed from the form body (strings at the leaves). */
  params: FormBody;
  /** Price ids of `line_items[i][price]`, in order. */
  priceIds: string[];
  /** `subscription_data[trial_period_days]` as a number, if sent. */
  trialPeriodDays: number | undefined;
  /** `subscription_data[metadata]`, if sent. */
  subscriptionMetadata: Record<string, string>;
}

export interface TestStripeServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request so far, in arrival order (live array; `reset()` empties it). */
  readonly requests: RecordedRequest[];
  /** Requests whose path starts with `pathPrefix` (and, if given, whose method matches). */
  requestsTo(pathPrefix: string, method?: string): RecordedRequest[];
  /** Options for `new Stripe(key, options)` pointing at this server. */
  sdkOptions(extra?: Record<string, unknown>): {
    host: string;
    port: number;
    protocol: "http";
    apiVersion: typeof STRIPE_API_VERSION;
    maxNetworkRetries: number;
  };

  /** The next `n` matching requests answer with a Stripe-shaped error. */
  failNext(n: number, fault: FaultSpec): void;
  /** The next `n` matching requests are recorded but never answered (until `close()`). */
  hangNext(n: number, filter?: RequestFilter): void;
  clearFaults(): void;
  /** Forgets requests, faults, stored objects, idempotency keys and meter events. */
  reset(): void;

  readonly customers: Map<string, Stripe.Customer>;
  readonly checkoutSessions: Map<string, StoredCheckoutSession>;
  readonly portalSessions: Map<string, Stripe.BillingPortal.Session>;
  readonly subscriptions: Map<string, Stripe.Subscription>;
  readonly invoices: Map<string, Stripe.Invoice>;
  /** Accepted (non-duplicate) meter events, in arrival order. */
  readonly meterEvents: AcceptedMeterEvent[];
  /** Meter events rejected as duplicates of an earlier `identifier`. */
  readonly duplicateMeterEvents: FormBody[];
  /** Sum of `payload.value` per `payload.stripe_customer_id` over accepted events (optionally one event name). */
  meterTotals(eventName?: string): Record<string, number>;

  /** Registers a price so checkout amounts and created subscriptions use its amount/interval. */
  setPrice(id: string, info: PriceInfo): void;
  /** Builds a subscription with `subscriptionObject` and stores it (GET /v1/subscriptions/:id finds it). */
  createSubscription(opts: SubscriptionOptions): Stripe.Subscription;
  /** Stores a subscription object as is. */
  putSubscription(sub: Stripe.Subscription): void;
  /** Builds an invoice with `invoiceObject` and stores it (GET /v1/invoices/:id finds it). */
  createInvoice(opts: InvoiceOptions): Stripe.Invoice;
  /**
   * Completes a stored Checkout Session as the hosted page would: creates and stores a subscription
   * from what the session asked for (prices, trial days, subscription metadata), marks the session
   * `complete`, and returns both plus the `checkout.session.completed` event to deliver.
   */
  completeCheckoutSession(
    id: string,
    opts?: { subscriptionId?: string; status?: Stripe.Subscription.Status; paymentStatus?: Stripe.Checkout.Session.PaymentStatus },
  ): { session: Stripe.Checkout.Session; subscription: Stripe.Subscription; event: Stripe.Event };

  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// ids, time, form parsing
// ---------------------------------------------------------------------------------------------

const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random Stripe-style id: `prefix` + `len` base62 characters (e.g. `cus_` + 14). */
export function stripeId(prefix: string, len = 24): string {
  const bytes = randomBytes(len);
  let out = "";
  for (let i = 0; i < len; i++) out += ALNUM[bytes[i]! % 62];
  return prefix + out;
}

/** Unix seconds now. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function addInterval(start: number, interval: PriceInfo["interval"] = "month", count = 1): number {
  const d = new Date(start * 1000);
  switch (interval) {
    case "day":
      return start + 86_400 * count;
    case "week":
      return start + 7 * 86_400 * count;
    case "year":
      d.setUTCFullYear(d.getUTCFullYear() + count);
      return Math.floor(d.getTime() / 1000);
    default:
      d.setUTCMonth(d.getUTCMonth() + count);
      return Math.floor(d.getTime() / 1000);
  }
}

/**
 * Parses a form-urlencoded body in the bracket notation the Stripe SDK writes
 * (`line_items[0][price]=p&metadata[org]=x&expand[0]=y`, also `a[]=1`) into nested objects and arrays.
 * Numeric segments make arrays. Leaves stay strings.
 */
export function parseStripeForm(raw: string): FormBody {
  const root: FormBody = {};
  if (!raw) return root;
  for (const [key, value] of new URLSearchParams(raw)) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    const segments = m ? [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((s) => s[1]!)] : [key];
    let node: any = root;
    for (let i = 0; i < segments.length; i++) {
      let seg = segments[i]!;
      if (seg === "__proto__" || seg === "constructor" || seg === "prototype") break;
      const last = i === segments.length - 1;
      if (Array.isArray(node) && seg === "") seg = String(node.length);
      if (last) {
        node[seg] = value;
        break;
      }
      const next = segments[i + 1]!;
      if (node[seg] === undefined || typeof node[seg] !== "object") {
        node[seg] = /^\d+$/.test(next) || next === "" ? [] : {};
      }
      node = node[seg];
    }
  }
  return root;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function strRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === "object" && !Array.isArray(v)) {
    for (const [k, val] of Object.entries(v)) if (typeof val === "string") out[k] = val;
  }
  return out;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

// ---------------------------------------------------------------------------------------------
// object builders (shapes per API version 2026-10-28.endive)
// ---------------------------------------------------------------------------------------------

function list<T>(data: T[], url: string) {
  return { object: "list" as const, data, has_more: false, total_count: data.length, url };
}

function priceObject(id: string, info: PriceInfo = {}, created = nowSeconds()) {
  const unit = info.unitAmount ?? 0;
  return {
    id,
    object: "price",
    active: true,
    billing_scheme: "per_unit",
    created,
    currency: info.currency ?? "usd",
    custom_unit_amount: null,
    livemode: false,
    lookup_key: info.lookupKey ?? null,
    metadata: {},
    nickname: null,
    product: info.product ?? stripeId("prod_", 14),
    recurring: {
      interval: info.interval ?? "month",
      interval_count: 1,
      meter: info.metered ? stripeId("mtr_test_", 24) : null,
      trial_period_days: null,
      usage_type: info.metered ? "metered" : "licensed",
    },
    tax_behavior: "unspecified",
    tiers_mode: null,
    transform_quantity: null,
    type: "recurring",
    unit_amount: unit,
    unit_amount_decimal: String(unit),
  };
}

function planFromPrice(price: ReturnType<typeof priceObject>) {
  return {
    id: price.id,
    object: "plan",
    active: true,
    amount: price.unit_amount,
    amount_decimal: price.unit_amount_decimal,
    billing_scheme: "per_unit",
    created: price.created,
    currency: price.currency,
    interval: price.recurring.interval,
    interval_count: 1,
    livemode: false,
    metadata: {},
    meter: price.recurring.meter,
    nickname: null,
    product: price.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: price.recurring.usage_type,
  };
}

/** One subscription item for `subscriptionObject`: a price id, or a price with its details. */
export interface SubscriptionItemOptions extends PriceInfo {
  price: string;
  quantity?: number;
  id?: string;
  metadata?: Record<string, string>;
}

export interface SubscriptionOptions {
  id?: string;
  customer: string;
  /** Default: `trialing` when a trial is set and still running, else `active`. */
  status?: Stripe.Subscription.Status;
  /** Items (price ids or details). Default: one licensed monthly item of `price_test_default`. */
  items?: Array<string | SubscriptionItemOptions>;
  /** Seconds; default now. */
  created?: number;
  /** Trial length from `created`; sets `trial_start`/`trial_end` and the first period to the trial. */
  trialDays?: number;
  trialStart?: number | null;
  trialEnd?: number | null;
  /** The items' current period (default: trial, else `created` + one price interval). */
  currentPeriodStart?: number;
  currentPeriodEnd?: number;
  cancelAtPeriodEnd?: boolean;
  /** Default: the period end when `cancelAtPeriodEnd`, else null. */
  cancelAt?: number | null;
  canceledAt?: number | null;
  endedAt?: number | null;
  metadata?: Record<string, string>;
  latestInvoice?: string | null;
  currency?: string;
  cancellationReason?: "cancellation_requested" | "payment_disputed" | "payment_failed" | null;
}

/**
 * A Subscription as API version 2026-10-28.endive returns it. Since 2025-03-31.basil the billing
 * period lives on each item (`items.data[i].current_period_start/end`), not on the subscription.
 */
export function subscriptionObject(opts: SubscriptionOptions, prices: Record<string, PriceInfo> = {}): Stripe.Subscription {
  const created = opts.created ?? nowSeconds();
  const id = opts.id ?? stripeId("sub_", 24);
  const trialStart = opts.trialStart !== undefined ? opts.trialStart : opts.trialDays !== undefined ? created : null;
  const trialEnd =
    opts.trialEnd !== undefined
      ? opts.trialEnd
      : opts.trialDays !== undefined
        ? created + opts.trialDays * 86_400
        : null;
  const itemSpecs: SubscriptionItemOptions[] = (opts.items ?? ["price_test_default"]).map((it) =>
    typeof it === "string" ? { ...prices[it], price: it } : { ...prices[it.price], ...it },
  );
  const firstInterval = itemSpecs[0]?.interval ?? "month";
  const periodStart = opts.currentPeriodStart ?? (trialEnd !== null && trialStart !== null ? trialStart : created);
  const periodEnd = opts.currentPeriodEnd ?? (trialEnd !== null ? trialEnd : addInterval(periodStart, firstInterval));
  const status: Stripe.Subscription.Status =
    opts.status ?? (trialEnd !== null && trialEnd > nowSeconds() ? "trialing" : "active");
  const items = itemSpecs.map((spec) => {
    const price = priceObject(spec.price, spec, created);
    return {
      id: spec.id ?? stripeId("si_", 14),
      object: "subscription_item",
      billing_thresholds: null,
      created,
      current_period_end: periodEnd,
      current_period_start: periodStart,
      discounts: [],
      metadata: spec.metadata ?? {},
      plan: planFromPrice(price),
      price,
      ...(spec.metered ? {} : { quantity: spec.quantity ?? 1 }),
      subscription: id,
      tax_rates: [],
    };
  });
  const cancelAtPeriodEnd = opts.cancelAtPeriodEnd ?? false;
  const sub = {
    id,
    object: "subscription",
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: trialEnd ?? periodStart,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: { proration_discounts: "included" }, type: "flexible", updated_at: created },
    billing_schedules: [],
    billing_thresholds: null,
    cancel_at: opts.cancelAt !== undefined ? opts.cancelAt : cancelAtPeriodEnd ? periodEnd : null,
    cancel_at_period_end: cancelAtPeriodEnd,
    canceled_at: opts.canceledAt ?? null,
    cancellation_details: { comment: null, feedback: null, reason: opts.cancellationReason ?? null },
    collection_method: "charge_automatically",
    created,
    currency: opts.currency ?? itemSpecs[0]?.currency ?? "usd",
    customer: opts.customer,
    customer_account: null,
    days_until_due: null,
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: opts.endedAt ?? null,
    invoice_settings: { account_tax_ids: null, issuer: { type: "self" } },
    items: list(items, `/v1/subscription_items?subscription=${id}`),
    latest_invoice: opts.latestInvoice !== undefined ? opts.latestInvoice : stripeId("in_", 24),
    livemode: false,
    managed_payments: null,
    metadata: opts.metadata ?? {},
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: "off" },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: created,
    status,
    test_clock: null,
    transfer_data: null,
    trial_end: trialEnd,
    trial_settings: { end_behavior: { missing_payment_method: "create_invoice" } },
    trial_start: trialStart,
  };
  return sub as unknown as Stripe.Subscription;
}

export interface InvoiceOptions {
  id?: string;
  customer: string;
  /** Placed at `parent.subscription_details.subscription` (and on the line items). */
  subscription?: string | null;
  /** Default `paid`. */
  status?: Stripe.Invoice.Status;
  billingReason?: Stripe.Invoice.BillingReason;
  /** Default 0 (`amount_paid` follows `amount_due` when paid). */
  amountDue?: number;
  amountPaid?: number;
  currency?: string;
  created?: number;
  periodStart?: number;
  periodEnd?: number;
  /** Price of the single line item. Default `price_test_default`. */
  price?: string;
  /** The line's service period (default: periodStart..periodEnd, or a month from `created`). */
  linePeriodStart?: number;
  linePeriodEnd?: number;
  metadata?: Record<string, string>;
  /** `parent.subscription_details.metadata` (the subscription's metadata at finalization). */
  subscriptionMetadata?: Record<string, string> | null;
  attemptCount?: number;
  nextPaymentAttempt?: number | null;
}

/**
 * An Invoice as API version 2026-10-28.endive returns it: the subscription is at
 * `parent.subscription_details.subscription` (the top-level `subscription` field was removed in basil).
 */
export function invoiceObject(opts: InvoiceOptions): Stripe.Invoice {
  const created = opts.created ?? nowSeconds();
  const id = opts.id ?? stripeId("in_", 24);
  const status = opts.status ?? "paid";
  const due = opts.amountDue ?? 0;
  const paid = opts.amountPaid ?? (status === "paid" ? due : 0);
  const currency = opts.currency ?? "usd";
  const periodStart = opts.periodStart ?? created;
  const periodEnd = opts.periodEnd ?? created;
  const lineStart = opts.linePeriodStart ?? periodStart;
  const lineEnd = opts.linePeriodEnd ?? (periodEnd > lineStart ? periodEnd : addInterval(lineStart, "month"));
  const sub = opts.subscription ?? null;
  const priceId = opts.price ?? "price_test_default";
  const line = {
    id: stripeId("il_", 24),
    object: "line_item",
    amount: due,
    currency,
    description: `1 × (at ${(due / 100).toFixed(2)} / month)`,
    discount_amounts: [],
    discountable: true,
    discounts: [],
    invoice: id,
    livemode: false,
    metadata: {},
    parent: sub
      ? {
          invoice_item_details: null,
          subscription_item_details: {
            invoice_item: null,
            proration: false,
            proration_details: { credited_items: null },
            subscription: sub,
            subscription_item: stripeId("si_", 14),
          },
          type: "subscription_item_details",
        }
      : null,
    period: { end: lineEnd, start: lineStart },
    pretax_credit_amounts: [],
    pricing: {
      price_details: { price: priceId, product: stripeId("prod_", 14) },
      type: "price_details",
      unit_amount_decimal: String(due),
    },
    quantity: 1,
    taxes: [],
  };
  const finalized = status !== "draft";
  const inv = {
    id,
    object: "invoice",
    account_country: "US",
    account_name: "Test Account",
    account_tax_ids: null,
    amount_due: due,
    amount_overpaid: 0,
    amount_paid: paid,
    amount_remaining: Math.max(0, due - paid),
    amount_shipping: 0,
    application: null,
    attempt_count: opts.attemptCount ?? (status === "paid" && due > 0 ? 1 : 0),
    attempted: status !== "draft",
    auto_advance: status === "open" || status === "draft",
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: null,
    billing_reason: opts.billingReason ?? (sub ? "subscription_cycle" : "manual"),
    collection_method: "charge_automatically",
    created,
    currency,
    custom_fields: null,
    customer: opts.customer,
    customer_account: null,
    customer_address: null,
    customer_email: null,
    customer_name: null,
    customer_phone: null,
    customer_shipping: null,
    customer_tax_exempt: "none",
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    due_date: null,
    effective_at: finalized ? created : null,
    ending_balance: finalized ? 0 : null,
    footer: null,
    from_invoice: null,
    hosted_invoice_url: finalized ? `https://invoice.stripe.test/i/${id}` : null,
    invoice_pdf: finalized ? `https://pay.stripe.test/invoice/${id}/pdf` : null,
    issuer: { type: "self" },
    last_finalization_error: null,
    latest_revision: null,
    lines: list([line], `/v1/invoices/${id}/lines`),
    livemode: false,
    metadata: opts.metadata ?? {},
    next_payment_attempt: opts.nextPaymentAttempt !== undefined ? opts.nextPaymentAttempt : null,
    number: finalized ? `TEST-${id.slice(3, 7).toUpperCase()}-0001` : null,
    on_behalf_of: null,
    parent: sub
      ? {
          quote_details: null,
          subscription_details: { metadata: opts.subscriptionMetadata ?? {}, subscription: sub },
          type: "subscription_details",
        }
      : null,
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: periodEnd,
    period_start: periodStart,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status,
    status_transitions: {
      finalized_at: finalized ? created : null,
      marked_uncollectible_at: status === "uncollectible" ? created : null,
      paid_at: status === "paid" ? created : null,
      voided_at: status === "void" ? created : null,
    },
    subtotal: due,
    subtotal_excluding_tax: due,
    test_clock: null,
    total: due,
    total_discount_amounts: [],
    total_excluding_tax: due,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: finalized ? created : null,
  };
  return inv as unknown as Stripe.Invoice;
}

export interface CheckoutSessionOptions {
  id?: string;
  customer?: string | null;
  customerEmail?: string | null;
  clientReferenceId?: string | null;
  metadata?: Record<string, string>;
  /** Default `open`. */
  status?: Stripe.Checkout.Session.Status;
  /** Default: `unpaid` when open, `paid` when complete. */
  paymentStatus?: Stripe.Checkout.Session.PaymentStatus;
  subscription?: string | null;
  invoice?: string | null;
  successUrl?: string | null;
  cancelUrl?: string | null;
  /** Default `always` (Stripe's default); `if_required` for trials without a card. */
  paymentMethodCollection?: Stripe.Checkout.Session.PaymentMethodCollection;
  amountSubtotal?: number | null;
  amountTotal?: number | null;
  currency?: string | null;
  created?: number;
  expiresAt?: number;
}

/** A Checkout Session in `mode: "subscription"` as API version 2026-10-28.endive returns it. */
export function checkoutSessionObject(opts: CheckoutSessionOptions = {}): Stripe.Checkout.Session {
  const created = opts.created ?? nowSeconds();
  const id = opts.id ?? stripeId("cs_test_", 58);
  const status = opts.status ?? "open";
  const complete = status === "complete";
  const session = {
    id,
    object: "checkout.session",
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: opts.amountSubtotal !== undefined ? opts.amountSubtotal : 0,
    amount_total: opts.amountTotal !== undefined ? opts.amountTotal : 0,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: opts.cancelUrl ?? null,
    client_reference_id: opts.clientReferenceId ?? null,
    client_secret: null,
    collected_information: complete ? { business_name: null, individual_name: null, shipping_details: null } : null,
    consent: null,
    consent_collection: null,
    created,
    currency: opts.currency !== undefined ? opts.currency : "usd",
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: opts.customer ?? null,
    customer_account: null,
    customer_creation: opts.customer ? null : "always",
    customer_details: complete
      ? {
          address: null,
          business_name: null,
          email: opts.customerEmail ?? "customer@example.test",
          individual_name: null,
          name: null,
          phone: null,
          tax_exempt: "none",
          tax_ids: [],
        }
      : opts.customerEmail
        ? { address: null, business_name: null, email: opts.customerEmail, individual_name: null, name: null, phone: null, tax_exempt: "none", tax_ids: null }
        : null,
    customer_email: opts.customerEmail ?? null,
    discounts: [],
    expires_at: opts.expiresAt ?? created + 86_400,
    integration_identifier: null,
    invoice: opts.invoice ?? null,
    invoice_creation: null,
    livemode: false,
    locale: null,
    managed_payments: null,
    metadata: opts.metadata ?? {},
    mode: "subscription",
    origin_context: null,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: opts.paymentMethodCollection ?? "always",
    payment_method_configuration_details: null,
    payment_method_options: { card: { request_three_d_secure: "automatic" } },
    payment_method_types: ["card"],
    payment_status: opts.paymentStatus ?? (complete ? "paid" : "unpaid"),
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: { allow_redisplay_filters: ["always"], payment_method_remove: "disabled", payment_method_save: null },
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status,
    submit_type: null,
    subscription: opts.subscription ?? null,
    success_url: opts.successUrl ?? null,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: "hosted",
    url: complete ? null : `https://checkout.stripe.test/c/pay/${id}`,
    wallet_options: null,
  };
  return session as unknown as Stripe.Checkout.Session;
}

/**
 * The `checkout.session.completed` event for a subscription checkout (session `status: "complete"`,
 * `payment_status` `paid` unless given, `subscription` set).
 */
export function checkoutSessionCompleted(
  opts: CheckoutSessionOptions & { customer: string; subscription: string; eventId?: string },
): Stripe.Event {
  const session = checkoutSessionObject({ ...opts, status: "complete" });
  return eventOf("checkout.session.completed", session, { id: opts.eventId });
}

/**
 * An Event envelope (`object: "event"`, `api_version`, `data.object`, `pending_webhooks`,
 * `request`). `previousAttributes` fills `data.previous_attributes` (for `*.updated` events).
 */
export function eventOf(
  type: string,
  object: unknown,
  opts: { id?: string; created?: number; previousAttributes?: Record<string, unknown>; requestId?: string | null; idempotencyKey?: string | null } = {},
): Stripe.Event {
  const event = {
    id: opts.id ?? stripeId("evt_", 24),
    object: "event",
    api_version: STRIPE_API_VERSION,
    created: opts.created ?? nowSeconds(),
    data: {
      object,
      ...(opts.previousAttributes ? { previous_attributes: opts.previousAttributes } : {}),
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: opts.requestId ?? null, idempotency_key: opts.idempotencyKey ?? null },
    type,
  };
  return event as unknown as Stripe.Event;
}

/** The `Stripe-Signature` header for `payload`, computed by the SDK (`t=<ts>,v1=<hmac>`). */
export function signedWebhook(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(timestamp !== undefined ? { timestamp } : {}),
  });
}

export interface DeliverOptions {
  /** Change the body after signing (the signature then no longer matches). */
  tamper?: boolean;
  /** Signature timestamp in seconds (e.g. an old one to test tolerance). */
  timestamp?: number;
  /** Send this `Stripe-Signature` instead of a computed one (`null`: send none). */
  signature?: string | null;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/**
 * POSTs `event` as Stripe does (pretty-printed JSON, `Content-Type: application/json; charset=utf-8`,
 * `Stripe-Signature`) to `url` and returns the answer.
 */
export async function deliver(
  url: string,
  event: unknown,
  secret: string,
  opts: DeliverOptions = {},
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders; payload: string }> {
  const signedPayload = JSON.stringify(event, null, 2);
  const signature =
    opts.signature !== undefined ? opts.signature : signedWebhook(signedPayload, secret, opts.timestamp);
  let payload = signedPayload;
  if (opts.tamper) {
    const parsed = JSON.parse(signedPayload) as { created?: number; livemode?: boolean };
    parsed.livemode = !parsed.livemode;
    payload = JSON.stringify(parsed, null, 2);
  }
  const target = new URL(url);
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
    "cache-control": "no-cache",
    accept: "*/*; q=0.5, application/xml",
    ...(signature !== null ? { "stripe-signature": signature } : {}),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(payload)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers, payload }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

// ---------------------------------------------------------------------------------------------
// the server
// ---------------------------------------------------------------------------------------------

interface StripeErrorBody {
  type: string;
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
  doc_url?: string;
  request_log_url?: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
  ) {
    super(error.message);
  }
}

function invalid(message: string, extra: Partial<StripeErrorBody> = {}, status = 400): HttpError {
  return new HttpError(status, { type: "invalid_request_error", message, ...extra });
}

function missingParam(param: string): HttpError {
  return invalid(`Missing required param: ${param}.`, {
    code: "parameter_missing",
    param,
    doc_url: "https://stripe.com/docs/error-codes/parameter-missing",
  });
}

function noSuch(kind: string, id: string): HttpError {
  return invalid(
    `No such ${kind}: '${id}'`,
    { code: "resource_missing", param: "id", doc_url: "https://stripe.com/docs/error-codes/resource-missing" },
    404,
  );
}

function faultBody(f: FaultSpec): StripeErrorBody {
  const s = f.status;
  const type = f.type ?? (s >= 500 ? "api_error" : s === 402 ? "card_error" : "invalid_request_error");
  const code =
    f.code ?? (s === 429 ? "rate_limit" : s === 402 ? "card_declined" : s === 404 ? "resource_missing" : undefined);
  const message =
    f.message ??
    (s >= 500
      ? "An unknown error occurred"
      : s === 429
        ? "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits."
        : s === 402
          ? "Your card was declined."
          : s === 401
            ? "Invalid API Key provided: sk_test_****"
            : "Injected test failure");
  return {
    type,
    message,
    ...(code ? { code, doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, "-")}` } : {}),
    ...(f.declineCode ? { decline_code: f.declineCode } : s === 402 && !f.code ? { decline_code: "generic_decline" } : {}),
    ...(f.param ? { param: f.param } : {}),
  };
}

function matches(filter: RequestFilter, method: string, path: string): boolean {
  if (filter.method && filter.method.toUpperCase() !== method.toUpperCase()) return false;
  if (filter.path && !path.startsWith(filter.path)) return false;
  return true;
}

interface Fault {
  remaining: number;
  filter: RequestFilter;
  kind: "fail" | "hang";
  spec?: FaultSpec;
}

interface StoredIdempotent {
  method: string;
  path: string;
  rawBody: string;
  status: number;
  body: string;
  requestId: string;
}

/** Starts the fake Stripe API on 127.0.0.1 (a free port). */
export async function startStripeServer(options: StripeServerOptions = {}): Promise<TestStripeServer> {
  const requests: RecordedRequest[] = [];
  let faults: Fault[] = [];
  const prices = new Map<string, PriceInfo>(Object.entries(options.prices ?? {}));
  const customers = new Map<string, Stripe.Customer>();
  const checkoutSessions = new Map<string, StoredCheckoutSession>();
  const portalSessions = new Map<string, Stripe.BillingPortal.Session>();
  const subscriptions = new Map<string, Stripe.Subscription>();
  const invoices = new Map<string, Stripe.Invoice>();
  const meterEvents: AcceptedMeterEvent[] = [];
  const duplicateMeterEvents: FormBody[] = [];
  const meterIdentifiers = new Set<string>();
  const idempotency = new Map<string, StoredIdempotent>();
  const hung = new Set<ServerResponse>();

  const priceRecord = (): Record<string, PriceInfo> => Object.fromEntries(prices);

  function send(res: ServerResponse, status: number, body: string, requestId: string, extra: Record<string, string> = {}) {
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "request-id": requestId,
      "stripe-version": STRIPE_API_VERSION,
      "access-control-allow-origin": "*",
      ...extra,
    });
    res.end(body);
  }

  function errorJson(error: StripeErrorBody, requestId: string): string {
    return JSON.stringify(
      { error: { ...error, request_log_url: `https://dashboard.stripe.com/test/logs/${requestId}?t=${nowSeconds()}` } },
      null,
      2,
    );
  }

  // --- route handlers: return a JSON-able object or throw HttpError ---

  function createCustomer(body: FormBody): Stripe.Customer {
    const id = stripeId("cus_", 14);
    const customer = {
      id,
      object: "customer",
      address: null,
      balance: 0,
      created: nowSeconds(),
      currency: null,
      default_source: null,
      delinquent: false,
      description: str(body.description) ?? null,
      discount: null,
      email: str(body.email) ?? null,
      invoice_prefix: randomBytes(4).toString("hex").toUpperCase(),
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
      metadata: strRecord(body.metadata),
      name: str(body.name) ?? null,
      next_invoice_sequence: 1,
      phone: str(body.phone) ?? null,
      preferred_locales: Array.isArray(body.preferred_locales) ? body.preferred_locales : [],
      shipping: null,
      tax_exempt: "none",
      test_clock: null,
    } as unknown as Stripe.Customer;
    customers.set(id, customer);
    return customer;
  }

  function createCheckoutSession(body: FormBody): Stripe.Checkout.Session {
    const mode = str(body.mode);
    if (!mode) throw missingParam("mode");
    if (mode !== "subscription" && mode !== "payment" && mode !== "setup") {
      throw invalid(`Invalid mode: must be one of payment, setup, or subscription`, { param: "mode" });
    }
    const lineItems: FormBody[] = Array.isArray(body.line_items) ? body.line_items : [];
    if (mode === "subscription" && lineItems.length === 0) {
      throw invalid("`line_items` is required in `subscription` mode.", { param: "line_items" });
    }
    if (body.customer && body.customer_email) {
      throw invalid("You may only specify one of these parameters: customer, customer_email.", { param: "customer_email" });
    }
    const priceIds = lineItems.map((li) => str(li?.price) ?? "");
    let amount = 0;
    let currency: string | undefined;
    for (const li of lineItems) {
      const p = prices.get(str(li?.price) ?? "");
      const qty = Number(li?.quantity ?? 1);
      if (p && !p.metered) amount += (p.unitAmount ?? 0) * (Number.isFinite(qty) ? qty : 1);
      currency ??= p?.currency;
    }
    const subData: FormBody = body.subscription_data && typeof body.subscription_data === "object" ? body.subscription_data : {};
    const trialRaw = str(subData.trial_period_days);
    const trialPeriodDays = trialRaw !== undefined ? Number(trialRaw) : undefined;
    if (trialPeriodDays !== undefined && (!Number.isInteger(trialPeriodDays) || trialPeriodDays < 1 || trialPeriodDays > 730)) {
      throw invalid("The `subscription_data[trial_period_days]` must be an integer between 1 and 730.", {
        param: "subscription_data[trial_period_days]",
      });
    }
    const pmc = str(body.payment_method_collection);
    const session = checkoutSessionObject({
      customer: str(body.customer) ?? null,
      customerEmail: str(body.customer_email) ?? null,
      clientReferenceId: str(body.client_reference_id) ?? null,
      metadata: strRecord(body.metadata),
      successUrl: str(body.success_url) ?? null,
      cancelUrl: str(body.cancel_url) ?? null,
      paymentMethodCollection: (pmc as Stripe.Checkout.Session.PaymentMethodCollection | undefined) ?? "always",
      amountSubtotal: amount,
      amountTotal: trialPeriodDays ? 0 : amount,
      currency: currency ?? str(body.currency) ?? "usd",
      expiresAt: body.expires_at ? Number(body.expires_at) : undefined,
    });
    (session as unknown as { mode: string }).mode = mode;
    checkoutSessions.set(session.id, {
      session,
      params: body,
      priceIds,
      trialPeriodDays,
      subscriptionMetadata: strRecord(subData.metadata),
    });
    return session;
  }

  function createPortalSession(body: FormBody): Stripe.BillingPortal.Session {
    const customer = str(body.customer);
    if (!customer) throw missingParam("customer");
    const id = stripeId("bps_", 24);
    const session = {
      id,
      object: "billing_portal.session",
      configuration: str(body.configuration) ?? stripeId("bpc_", 24),
      created: nowSeconds(),
      customer,
      customer_account: null,
      flow: null,
      livemode: false,
      locale: str(body.locale) ?? null,
      on_behalf_of: null,
      return_url: str(body.return_url) ?? null,
      url: `https://billing.stripe.test/p/session/test_${randomBytes(24).toString("base64url")}`,
    } as unknown as Stripe.BillingPortal.Session;
    portalSessions.set(id, session);
    return session;
  }

  function createMeterEvent(body: FormBody): AcceptedMeterEvent {
    const eventName = str(body.event_name);
    if (!eventName) throw missingParam("event_name");
    if (!body.payload || typeof body.payload !== "object") throw missingParam("payload");
    const payload = strRecord(body.payload);
    const identifier = str(body.identifier) ?? randomUUID();
    // Guess (documented in the header comment): Stripe documents that it enforces identifier
    // uniqueness within a rolling >= 24h window but not the exact answer; we answer 400.
    if (meterIdentifiers.has(identifier)) {
      duplicateMeterEvents.push(body);
      throw invalid(`An event already exists with identifier ${identifier}.`, {
        code: "resource_already_exists",
        param: "identifier",
        doc_url: "https://stripe.com/docs/error-codes/resource-already-exists",
      });
    }
    const now = nowSeconds();
    const timestamp = body.timestamp !== undefined ? Number(body.timestamp) : now;
    if (!Number.isFinite(timestamp)) throw invalid("Invalid integer: timestamp", { param: "timestamp" });
    if (timestamp < now - 35 * 86_400 || timestamp > now + 300) {
      throw invalid("Timestamp must be within the past 35 calendar days or up to 5 minutes in the future.", {
        param: "timestamp",
      });
    }
    meterIdentifiers.add(identifier);
    const event: AcceptedMeterEvent = {
      object: "billing.meter_event",
      created: now,
      event_name: eventName,
      identifier,
      livemode: false,
      payload,
      timestamp,
    };
    meterEvents.push(event);
    return event;
  }

  function updateSubscription(id: string, body: FormBody): Stripe.Subscription {
    const sub = subscriptions.get(id);
    if (!sub) throw noSuch("subscription", id);
    const s = sub as any;
    if (body.cancel_at_period_end !== undefined) {
      s.cancel_at_period_end = body.cancel_at_period_end === "true";
      s.cancel_at = s.cancel_at_period_end ? (s.items.data[0]?.current_period_end ?? null) : null;
      s.cancellation_details = {
        comment: null,
        feedback: null,
        reason: s.cancel_at_period_end ? "cancellation_requested" : null,
      };
    }
    if (body.metadata && typeof body.metadata === "object") {
      for (const [k, v] of Object.entries(strRecord(body.metadata))) {
        if (v === "") delete s.metadata[k];
        else s.metadata[k] = v;
      }
    }
    return sub;
  }

  function cancelSubscription(id: string): Stripe.Subscription {
    const sub = subscriptions.get(id);
    if (!sub) throw noSuch("subscription", id);
    const s = sub as any;
    const now = nowSeconds();
    s.status = "canceled";
    s.canceled_at = now;
    s.ended_at = now;
    s.cancellation_details = { comment: null, feedback: null, reason: "cancellation_requested" };
    return sub;
  }

  function route(method: string, path: string, body: FormBody): unknown {
    let m: RegExpExecArray | null;
    if (method === "POST" && path === "/v1/customers") return createCustomer(body);
    if (method === "GET" && (m = /^\/v1\/customers\/([^/]+)$/.exec(path))) {
      const c = customers.get(decodeURIComponent(m[1]!));
      if (!c) throw noSuch("customer", decodeURIComponent(m[1]!));
      return c;
    }
    if (method === "POST" && path === "/v1/checkout/sessions") return createCheckoutSession(body);
    if (method === "GET" && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) {
      const s = checkoutSessions.get(decodeURIComponent(m[1]!));
      if (!s) throw noSuch("checkout.session", decodeURIComponent(m[1]!));
      return s.session;
    }
    if (method === "GET" && (m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/.exec(path))) {
      const id = decodeURIComponent(m[1]!);
      const s = checkoutSessions.get(id);
      if (!s) throw noSuch("checkout.session", id);
      const items = s.priceIds.map((p, i) => {
        const info = prices.get(p) ?? {};
        const qty = Number((s.params.line_items as FormBody[])[i]?.quantity ?? 1);
        const amount = info.metered ? 0 : (info.unitAmount ?? 0) * qty;
        return {
          id: stripeId("li_", 24),
          object: "item",
          amount_discount: 0,
          amount_subtotal: amount,
          amount_tax: 0,
          amount_total: amount,
          currency: info.currency ?? "usd",
          description: null,
          price: priceObject(p, info),
          ...(info.metered ? {} : { quantity: qty }),
        };
      });
      return list(items, `/v1/checkout/sessions/${id}/line_items`);
    }
    if (method === "POST" && path === "/v1/billing_portal/sessions") return createPortalSession(body);
    if (method === "POST" && path === "/v1/billing/meter_events") return createMeterEvent(body);
    if ((m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(m[1]!);
      if (method === "GET") {
        const s = subscriptions.get(id);
        if (!s) throw noSuch("subscription", id);
        return s;
      }
      if (method === "POST") return updateSubscription(id, body);
      if (method === "DELETE") return cancelSubscription(id);
    }
    if (method === "GET" && (m = /^\/v1\/invoices\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(m[1]!);
      const inv = invoices.get(id);
      if (!inv) throw noSuch("invoice", id);
      return inv;
    }
    throw invalid(
      `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
      {},
      404,
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse, rawBody: string) {
    const method = (req.method ?? "GET").toUpperCase();
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    const body = parseStripeForm(rawBody);
    const record: RecordedRequest = {
      method,
      path,
      query: parseStripeForm(url.search.slice(1)),
      headers: req.headers,
      authorization: header(req.headers, "authorization"),
      idempotencyKey: header(req.headers, "idempotency-key"),
      stripeVersion: header(req.headers, "stripe-version"),
      rawBody,
      body,
      outcome: undefined,
      at: Date.now(),
    };
    requests.push(record);
    const requestId = stripeId("req_", 14);

    const fault = faults.find((f) => f.remaining > 0 && matches(f.filter, method, path));
    if (fault) {
      fault.remaining--;
      faults = faults.filter((f) => f.remaining > 0);
      if (fault.kind === "hang") {
        record.outcome = "hang";
        hung.add(res);
        res.on("close", () => hung.delete(res));
        return;
      }
      const spec = fault.spec!;
      record.outcome = spec.status;
      send(res, spec.status, errorJson(faultBody(spec), requestId), requestId, {
        ...(spec.shouldRetry !== undefined ? { "stripe-should-retry": String(spec.shouldRetry) } : {}),
      });
      return;
    }

    const auth = record.authorization;
    if (!auth || !/^Bearer \S+$/.test(auth)) {
      record.outcome = 401;
      send(
        res,
        401,
        errorJson(
          {
            type: "invalid_request_error",
            message:
              "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
          },
          requestId,
        ),
        requestId,
        { "www-authenticate": 'Bearer realm="Stripe"' },
      );
      return;
    }

    const idemKey = method === "POST" ? record.idempotencyKey : undefined;
    const idemScope = idemKey ? `${auth}\u0000${idemKey}` : undefined;
    if (idemScope) {
      const prior = idempotency.get(idemScope);
      if (prior) {
        if (prior.method !== method || prior.path !== path || prior.rawBody !== rawBody) {
          record.outcome = 400;
          send(
            res,
            400,
            errorJson(
              {
                type: "idempotency_error",
                message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idemKey}' if you meant to execute a different request.`,
              },
              requestId,
            ),
            requestId,
            { "idempotency-key": idemKey! },
          );
          return;
        }
        record.outcome = prior.status;
        send(res, prior.status, prior.body, requestId, {
          "idempotency-key": idemKey!,
          "idempotent-replayed": "true",
          "original-request": prior.requestId,
        });
        return;
      }
    }

    let status = 200;
    let out: string;
    try {
      out = JSON.stringify(route(method, path, body), null, 2);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      status = e.status;
      out = errorJson(e.error, requestId);
    }
    record.outcome = status;
    if (idemScope && status >= 200 && status < 300) {
      idempotency.set(idemScope, { method, path, rawBody, status, body: out, requestId });
    }
    send(res, status, out, requestId, idemKey ? { "idempotency-key": idemKey, "original-request": requestId } : {});
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString("utf8"));
      } catch (e) {
        const requestId = stripeId("req_", 14);
        send(res, 500, errorJson({ type: "api_error", message: `Test server bug: ${String(e)}` }, requestId), requestId);
      }
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const api: TestStripeServer = {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo(pathPrefix, method) {
      return requests.filter((r) => r.path.startsWith(pathPrefix) && (!method || r.method === method.toUpperCase()));
    },
    sdkOptions(extra = {}) {
      return { host: "127.0.0.1", port, protocol: "http", apiVersion: STRIPE_API_VERSION, maxNetworkRetries: 0, ...extra };
    },
    failNext(n, fault) {
      const { method, path, ...spec } = fault;
      faults.push({ remaining: n, filter: { method, path }, kind: "fail", spec: { ...spec } });
    },
    hangNext(n, filter = {}) {
      faults.push({ remaining: n, filter: { ...filter }, kind: "hang" });
    },
    clearFaults() {
      faults = [];
    },
    reset() {
      requests.length = 0;
      faults = [];
      customers.clear();
      checkoutSessions.clear();
      portalSessions.clear();
      subscriptions.clear();
      invoices.clear();
      meterEvents.length = 0;
      duplicateMeterEvents.length = 0;
      meterIdentifiers.clear();
      idempotency.clear();
    },
    customers,
    checkoutSessions,
    portalSessions,
    subscriptions,
    invoices,
    meterEvents,
    duplicateMeterEvents,
    meterTotals(eventName) {
      const totals: Record<string, number> = {};
      for (const e of meterEvents) {
        if (eventName !== undefined && e.event_name !== eventName) continue;
        const customer = e.payload.stripe_customer_id ?? "";
        totals[customer] = (totals[customer] ?? 0) + Number(e.payload.value ?? 0);
      }
      return totals;
    },
    setPrice(id, info) {
      prices.set(id, info);
    },
    createSubscription(opts) {
      const sub = subscriptionObject(opts, priceRecord());
      subscriptions.set(sub.id, sub);
      return sub;
    },
    putSubscription(sub) {
      subscriptions.set(sub.id, sub);
    },
    createInvoice(opts) {
      const inv = invoiceObject(opts);
      invoices.set(inv.id, inv);
      return inv;
    },
    completeCheckoutSession(id, opts = {}) {
      const stored = checkoutSessions.get(id);
      if (!stored) throw new Error(`no stored checkout session ${id}`);
      const prior = stored.session;
      const customer = (typeof prior.customer === "string" ? prior.customer : null) ?? stripeId("cus_", 14);
      const subscription = subscriptionObject(
        {
          id: opts.subscriptionId,
          customer,
          status: opts.status,
          items: stored.priceIds.map((p, i) => {
            const qty = (stored.params.line_items as FormBody[])[i]?.quantity;
            return { ...prices.get(p), price: p, ...(qty !== undefined ? { quantity: Number(qty) } : {}) };
          }),
          ...(stored.trialPeriodDays !== undefined ? { trialDays: stored.trialPeriodDays } : {}),
          metadata: stored.subscriptionMetadata,
        },
        priceRecord(),
      );
      subscriptions.set(subscription.id, subscription);
      const session = {
        ...checkoutSessionObject({
          id: prior.id,
          created: prior.created,
          expiresAt: prior.expires_at,
          customer,
          customerEmail: prior.customer_email,
          clientReferenceId: prior.client_reference_id,
          metadata: (prior.metadata ?? {}) as Record<string, string>,
          status: "complete",
          paymentStatus:
            opts.paymentStatus ??
            (stored.trialPeriodDays !== undefined || (prior.amount_total ?? 0) === 0 ? "no_payment_required" : "paid"),
          subscription: subscription.id,
          invoice: subscription.latest_invoice as string | null,
          successUrl: prior.success_url,
          cancelUrl: prior.cancel_url,
          paymentMethodCollection: prior.payment_method_collection ?? "always",
          amountSubtotal: prior.amount_subtotal,
          amountTotal: prior.amount_total,
          currency: prior.currency,
        }),
      } as Stripe.Checkout.Session;
      stored.session = session;
      return { session, subscription, event: eventOf("checkout.session.completed", session) };
    },
    async close() {
      for (const res of hung) res.destroy();
      hung.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return api;
}

/** The webhook signing secret the test servers are configured with (stripeEnv). */
export const TEST_WEBHOOK_SECRET = "whsec_test_secret";

/** Service environment with billing pointed at the local Stripe-compatible server on `port`. */
export function stripeEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: "sk_test_fraudscore",
    STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    STRIPE_PRICE_PRO: "price_pro",
    STRIPE_PRICE_PRO_OVERAGE: "price_pro_overage",
    STRIPE_PRICE_BUSINESS: "price_business",
    STRIPE_PRICE_BUSINESS_OVERAGE: "price_business_overage",
    STRIPE_API_HOST: "127.0.0.1",
    STRIPE_API_PORT: String(port),
    STRIPE_API_PROTOCOL: "http",
    STRIPE_TIMEOUT_MS: "700",
    FS_OVERAGE_REPORT_MS: "150",
    FS_PUBLIC_URL: "https://fs.example.com",
    ...extra,
  };
}
