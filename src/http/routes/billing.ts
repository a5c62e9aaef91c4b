import type { OrgRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { defineRoute } from "../route.js";
import { ackOrThrow } from "./ack.js";
import { ownOrgId } from "./project-access.js";
import { checkoutBody, checkoutResponse, portalBody, portalResponse, stripeEventBody, stripeWebhookResponse } from "../schemas/billing.js";
import { orgIdParam } from "../schemas/params.js";
import type { KeyPrincipal } from "../../front/auth.js";
import { parseJson } from "../body.js";
import type { RequestSnapshot } from "../request.js";
import { normalizeEvent } from "../../front/billing/events.js";
import { TRIAL_DAYS, type BillingSetup } from "../../front/billing/stripe.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "billing" | "log" | "peers" | "reads" | "store">;

/**
 * The billing router: checkout, portal and Stripe's webhook. It talks to Stripe and to the
 * writer only, never to the scoring pool, and every Stripe call is bounded by STRIPE_TIMEOUT_MS:
 * a slow payment provider delays billing calls, not scoring.
 */

function setupOrThrow(deps: Deps): BillingSetup {
  if (!deps.billing) throw new ApiError("BILLING_NOT_CONFIGURED", "Billing is not configured on this installation: set STRIPE_SECRET_KEY and the STRIPE_PRICE_* variables.");
  return deps.billing;
}

/**
 * The caller's own org, which needs the manage-billing capability (a `billing` scope key). Another
 * org's id answers 404 like a missing one.
 */
async function billingOrg(deps: Deps, principal: KeyPrincipal, orgId: string): Promise<OrgRecord> {
  const org = await deps.reads.get("orgs", ownOrgId(principal, orgId));
  if (!org) throw new ApiError("NOT_FOUND", `No org with id ${orgId}.`);
  return org;
}

function providerError(err: unknown): ApiError {
  const e = err as { type?: string; message?: string; statusCode?: number };
  const what = e.type === "StripeConnectionError" ? "did not answer in time" : `answered ${e.statusCode ?? "an error"}${e.message ? `: ${e.message}` : ""}`;
  return new ApiError("PAYMENT_PROVIDER_ERROR", `Stripe ${what}. Nothing was changed; retry later.`);
}

async function callStripe<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw providerError(err);
  }
}

/** POST /v1/orgs/{orgId}/billing/checkout {plan, success_url?, cancel_url?} -> {url, session_id} */
export function checkoutPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/orgs/:orgId/billing/checkout",
    auth: { kind: "secret", scope: "billing", live: true },
    body: checkoutBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Start a subscription (Stripe Checkout)",
      description: [
        "A Stripe Checkout Session for the key's own org and the chosen plan (monthly price plus metered overage; pro starts with a trial). Send the customer to `url`; the subscription takes effect when Stripe's webhook reports it.",
        "`success_url` defaults to FS_PUBLIC_URL/billing/success and is required without it. An org with a live subscription gets 409 ALREADY_SUBSCRIBED (use the portal); a Stripe failure or timeout 502 PAYMENT_PROVIDER_ERROR, with nothing changed.",
      ].join("\n\n"),
      tag: "billing",
      response: checkoutResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "ALREADY_SUBSCRIBED", "PAYMENT_PROVIDER_ERROR", "BILLING_NOT_CONFIGURED", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        body: { plan: "pro", success_url: "https://shop.example.com/billing/done" },
        response: { url: "https://checkout.stripe.com/c/pay/cs_test_a1B2c3", session_id: "cs_test_a1B2c3" },
      },
    },
    async handle({ principal, params, body }) {
      const setup = setupOrThrow(deps);
      let org = await billingOrg(deps, principal!, params.orgId);
      // One subscription per org: a second checkout would bill twice. Plan changes go through the portal.
      if (org.stripe_subscription_id && (org.subscription_status === "trialing" || org.subscription_status === "active" || org.subscription_status === "past_due")) {
        throw new ApiError("ALREADY_SUBSCRIBED", "This org already has a subscription; change plan or payment details in the billing portal (POST /v1/orgs/{orgId}/billing/portal).");
      }
      const base = setup.publicUrl;
      const successUrl = body.success_url ?? (base ? `${base}/billing/success?session_id={CHECKOUT_SESSION_ID}` : null);
      const cancelUrl = body.cancel_url ?? (base ? `${base}/billing/canceled` : null);
      if (!successUrl) throw new ApiError("VALIDATION_ERROR", "body.success_url: required when FS_PUBLIC_URL is not set.");
      // The org's Stripe customer, created once (the idempotency key makes a concurrent second
      // checkout get the same customer).
      let customerId = org.stripe_customer_id ?? null;
      if (!customerId) {
        const customer = await callStripe(() =>
          setup.stripe.customers.create({ name: org.name, metadata: { org_id: org.id } }, { idempotencyKey: `fs-customer-${org.id}` }),
        );
        customerId = customer.id;
        org = ackOrThrow(await deps.store.send({ op: "billing.customer", orgId: org.id, customerId })).org;
      }
      const prices = setup.prices[body.plan];
      const trialDays = TRIAL_DAYS[body.plan];
      const session = await callStripe(() =>
        setup.stripe.checkout.sessions.create({
          mode: "subscription",
          customer: customerId!,
          client_reference_id: org.id,
          line_items: [{ price: prices.monthly, quantity: 1 }, { price: prices.overage }],
          payment_method_collection: "always",
          subscription_data: { ...(trialDays > 0 ? { trial_period_days: trialDays } : {}), metadata: { org_id: org.id, plan: body.plan } },
          metadata: { org_id: org.id, plan: body.plan },
          success_url: successUrl,
          ...(cancelUrl ? { cancel_url: cancelUrl } : {}),
        }),
      );
      return { data: { url: session.url, session_id: session.id }, credits: 0 };
    },
  });
}

/** POST /v1/orgs/{orgId}/billing/portal {return_url?} -> {url} */
export function portalPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/orgs/:orgId/billing/portal",
    auth: { kind: "secret", scope: "billing", live: true },
    body: portalBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Open the billing portal",
      description: "A Stripe billing portal session for the key's own org, to change plan or payment details or cancel. An org that never went through checkout gets 409 NO_BILLING_ACCOUNT.",
      tag: "billing",
      response: portalResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NO_BILLING_ACCOUNT", "PAYMENT_PROVIDER_ERROR", "BILLING_NOT_CONFIGURED", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        body: { return_url: "https://shop.example.com/account" },
        response: { url: "https://billing.stripe.com/p/session/test_YWNjdF8x" },
      },
    },
    async handle({ principal, params, body }) {
      const setup = setupOrThrow(deps);
      const org = await billingOrg(deps, principal!, params.orgId);
      if (!org.stripe_customer_id) throw new ApiError("NO_BILLING_ACCOUNT", "This org has no Stripe customer yet; start a subscription with POST /v1/orgs/{orgId}/billing/checkout.");
      const returnUrl = body.return_url ?? setup.publicUrl ?? undefined;
      const session = await callStripe(() =>
        setup.stripe.billingPortal.sessions.create({ customer: org.stripe_customer_id!, ...(returnUrl ? { return_url: returnUrl } : {}) }),
      );
      return { data: { url: session.url }, credits: 0 };
    },
  });
}

/** `t=<seconds>,v1=<hex>[,...]` as Stripe signs; anything else cannot verify, so its body is never read. */
const STRIPE_SIGNATURE = /^t=(\d{1,12})(,[a-z0-9]{1,8}=[0-9a-f]{1,128}){1,8}$/;

/** How far a signature's timestamp may be from now, either way (seconds): Stripe's SDK default. */
export const WEBHOOK_TOLERANCE_S = 300;

/**
 * Answers before the body is read: billing and webhooks configured, a signature header of
 * Stripe's form, stamped within WEBHOOK_TOLERANCE_S of now. (The SDK refuses only old stamps: a
 * stamp in the future would make a captured delivery replayable until then.)
 */
function webhookPrecheck(deps: Deps, snap: RequestSnapshot): void {
  const setup = setupOrThrow(deps);
  if (!setup.webhookSecret) throw new ApiError("BILLING_NOT_CONFIGURED", "Webhooks are not configured: set STRIPE_WEBHOOK_SECRET.");
  const signature = snap.extra["stripe-signature"] ?? "";
  if (!signature) throw new ApiError("INVALID_SIGNATURE", "Stripe-Signature header missing.");
  const form = signature.length > 1024 ? null : STRIPE_SIGNATURE.exec(signature);
  if (!form || !/(^|,)v1=/.test(signature)) {
    throw new ApiError("INVALID_SIGNATURE", "Stripe-Signature header is not of the form t=<timestamp>,v1=<signature>.");
  }
  const skew = Number(form[1]) - Date.now() / 1000;
  if (Math.abs(skew) > WEBHOOK_TOLERANCE_S) {
    throw new ApiError("INVALID_SIGNATURE", `Stripe-Signature timestamp is ${Math.round(Math.abs(skew))} s ${skew > 0 ? "in the future" : "old"}; at most ${WEBHOOK_TOLERANCE_S} s either way is accepted.`);
  }
}

/**
 * POST /webhooks/stripe: billing configuration, the form of the Stripe-Signature header and its
 * timestamp are checked before the body is read; then the signature is verified on the raw body
 * (the SDK's constructEvent), the event's envelope and the fields we use (dates in range) are
 * validated, and the event goes to the writer, which applies it exactly once and never lets an
 * older event undo a newer state. Answers 200 for every verified event (also duplicates and types
 * we ignore, so Stripe stops retrying); 400 INVALID_SIGNATURE or VALIDATION_ERROR otherwise,
 * recording nothing.
 */
export function stripeWebhookPost(deps: Deps) {
  return defineRoute<Buffer>({
    method: "post",
    pattern: "/webhooks/stripe",
    auth: { kind: "none" },
    // Stripe's events can be larger than API requests (an invoice with many lines); they are held
    // in a pool of their own, apart from the beacon's and the sign-in's.
    rawBody: { headers: ["stripe-signature"], maxBytes: 1024 * 1024, precheck: (snap) => webhookPrecheck(deps, snap), pool: "webhook" },
    docs: {
      summary: "Stripe webhook",
      description: [
        "Stripe's event deliveries. Billing configuration, the form of the Stripe-Signature header and its timestamp (within 300 s of now, either way) are checked before the body is read (without them the answer comes at once); then the signature is checked against the raw body, the event's envelope (id, type, created, data.object) and the fields used are validated (dates between 2000-01-01 and 10 years from now), and the event is applied exactly once; an older event never undoes a newer state.",
        "Every verified, well-formed event is answered 200 with a receipt (also duplicates and types that are ignored, so Stripe stops retrying); 400 INVALID_SIGNATURE or VALIDATION_ERROR otherwise, with nothing recorded. The body may be up to 1 MiB.",
      ].join("\n\n"),
      tag: "billing",
      response: stripeWebhookResponse,
      rawBody: stripeEventBody,
      errors: ["INVALID_SIGNATURE", "VALIDATION_ERROR", "BILLING_NOT_CONFIGURED", "NOT_READY"],
      example: {
        body: { id: "evt_1QxY2z", object: "event", type: "customer.subscription.updated", created: 1_763_677_200, data: { object: { id: "sub_1QxY2z", object: "subscription" } } },
        response: { received: true, id: "evt_1QxY2z", type: "customer.subscription.updated", duplicate: false, applied: true },
      },
    },
    async handle({ body: raw, snap }) {
      const setup = setupOrThrow(deps);
      let parsed: unknown;
      try {
        parsed = setup.stripe.webhooks.constructEvent(raw, snap.extra["stripe-signature"] ?? "", setup.webhookSecret ?? "", WEBHOOK_TOLERANCE_S);
      } catch (err) {
        // Verified but not JSON: the SDK's parse fails after its signature check passed.
        if ((err as { type?: string }).type !== "StripeSignatureVerificationError") parsed = parseJson(raw);
        else throw new ApiError("INVALID_SIGNATURE", `Stripe-Signature does not verify: ${(err as Error).message.split("\n")[0]}`);
      }
      const normalized = normalizeEvent(parsed, setup, Date.now());
      if (!normalized.ok) throw new ApiError("VALIDATION_ERROR", `${normalized.message}. The event was not recorded.`);
      const event = normalized.event;
      const ack = ackOrThrow(await deps.store.send({ op: "billing.event", event, nowMs: Date.now() }));
      const outcome = ack;
      // Plan and billing period take effect for the very next call.
      if (outcome.org) deps.peers.billing(outcome.org);
      deps.log.info("stripe event", { id: event.id, type: event.type, duplicate: outcome.duplicate, applied: outcome.applied, note: outcome.note });
      return { data: { received: true, id: event.id, type: event.type, duplicate: outcome.duplicate, applied: outcome.applied } };
    },
  });
}
