import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  STRIPE_API_VERSION,
  checkoutSessionCompleted,
  deliver,
  eventOf,
  invoiceObject,
  parseStripeForm,
  signedWebhook,
  startStripeServer,
  subscriptionObject,
  type TestStripeServer,
} from "../integration/helpers/stripe-server.js";

const KEY = "sk_test_unit_fake_key";

let fake: TestStripeServer;
let stripe: Stripe;

beforeAll(async () => {
  fake = await startStripeServer({ prices: { price_pro_monthly: { unitAmount: 4900 } } });
  stripe = new Stripe(KEY, {
    host: "127.0.0.1",
    port: fake.port,
    protocol: "http",
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 0,
  });
});

afterEach(() => fake.reset());
afterAll(() => fake.close());

describe("form parsing", () => {
  it("parses bracket notation into nested objects and arrays", () => {
    const body = parseStripeForm(
      "mode=subscription&line_items[0][price]=p1&line_items[0][quantity]=2&line_items[1][price]=p2" +
        "&metadata[org_id]=org%201&subscription_data[trial_period_days]=14&expand[]=a&expand[]=b&x=a+b",
    );
    expect(body).toEqual({
      mode: "subscription",
      line_items: [{ price: "p1", quantity: "2" }, { price: "p2" }],
      metadata: { org_id: "org 1" },
      subscription_data: { trial_period_days: "14" },
      expand: ["a", "b"],
      x: "a b",
    });
  });
});

describe("fake Stripe API driven by the real SDK", () => {
  it("creates a customer, honours Idempotency-Key, records headers", async () => {
    const a = await stripe.customers.create(
      { email: "a@example.test", metadata: { org_id: "org_1" } },
      { idempotencyKey: "idem-cust-1" },
    );
    const b = await stripe.customers.create(
      { email: "a@example.test", metadata: { org_id: "org_1" } },
      { idempotencyKey: "idem-cust-1" },
    );
    expect(a.id).toMatch(/^cus_[0-9A-Za-z]{14}$/);
    expect(b.id).toBe(a.id);
    expect(a).toMatchObject({ object: "customer", livemode: false, email: "a@example.test", metadata: { org_id: "org_1" } });
    expect(a.created).toBeLessThan(Date.now() / 1000 + 1);
    expect(a.created).toBeGreaterThan(1_700_000_000);
    expect(fake.customers.size).toBe(1);
    expect(b.lastResponse.headers["idempotent-replayed"]).toBe("true");

    const reqs = fake.requestsTo("/v1/customers", "POST");
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(reqs[0]!.idempotencyKey).toBe("idem-cust-1");
    expect(reqs[0]!.stripeVersion).toBe(STRIPE_API_VERSION);
    expect(reqs[0]!.body).toEqual({ email: "a@example.test", metadata: { org_id: "org_1" } });

    // The same key with different parameters is an idempotency error, as on Stripe.
    await expect(
      stripe.customers.create({ email: "other@example.test" }, { idempotencyKey: "idem-cust-1" }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);

    const got = await stripe.customers.retrieve(a.id);
    expect(got.id).toBe(a.id);
    await expect(stripe.customers.retrieve("cus_missing")).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      statusCode: 404,
      code: "resource_missing",
    });
  });

  it("creates a subscription Checkout Session and stores what was asked", async () => {
    const s = await stripe.checkout.sessions.create({
      mode: "subscription",
      customer: "cus_TEST00000001",
      client_reference_id: "org_42",
      metadata: { org_id: "org_42" },
      line_items: [{ price: "price_pro_monthly", quantity: 1 }, { price: "price_metered_calls" }],
      subscription_data: { trial_period_days: 14, metadata: { org_id: "org_42", plan: "pro" } },
      payment_method_collection: "if_required",
      success_url: "https://app.test/billing/success?session_id={CHECKOUT_SESSION_ID}",
      cancel_url: "https://app.test/billing/cancel",
    });
    expect(s.id).toMatch(/^cs_test_/);
    expect(s).toMatchObject({
      object: "checkout.session",
      mode: "subscription",
      status: "open",
      subscription: null,
      customer: "cus_TEST00000001",
      client_reference_id: "org_42",
      metadata: { org_id: "org_42" },
      livemode: false,
      payment_method_collection: "if_required",
      amount_subtotal: 4900,
    });
    expect(s.url).toBe(`https://checkout.stripe.test/c/pay/${s.id}`);

    const stored = fake.checkoutSessions.get(s.id)!;
    expect(stored.priceIds).toEqual(["price_pro_monthly", "price_metered_calls"]);
    expect(stored.trialPeriodDays).toBe(14);
    expect(stored.subscriptionMetadata).toEqual({ org_id: "org_42", plan: "pro" });
    expect(stored.params).toMatchObject({
      line_items: [{ price: "price_pro_monthly", quantity: "1" }, { price: "price_metered_calls" }],
      subscription_data: { trial_period_days: "14", metadata: { org_id: "org_42", plan: "pro" } },
      payment_method_collection: "if_required",
      success_url: "https://app.test/billing/success?session_id={CHECKOUT_SESSION_ID}",
      cancel_url: "https://app.test/billing/cancel",
    });

    const done = fake.completeCheckoutSession(s.id);
    expect(done.session.status).toBe("complete");
    expect(done.session.subscription).toBe(done.subscription.id);
    expect(done.subscription.status).toBe("trialing");
    expect(done.subscription.metadata).toEqual({ org_id: "org_42", plan: "pro" });
    const sub = await stripe.subscriptions.retrieve(done.subscription.id);
    expect(sub.items.data.map((i) => i.price.id)).toEqual(["price_pro_monthly", "price_metered_calls"]);
    expect(sub.trial_end! - sub.trial_start!).toBe(14 * 86_400);
    expect(sub.items.data[0]!.current_period_end).toBe(sub.trial_end);
  });

  it("rejects a subscription checkout without line items like Stripe", async () => {
    await expect(
      stripe.checkout.sessions.create({ mode: "subscription", success_url: "https://x.test/" }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  });

  it("creates a billing portal session", async () => {
    const p = await stripe.billingPortal.sessions.create({ customer: "cus_X", return_url: "https://app.test/settings" });
    expect(p.id).toMatch(/^bps_/);
    expect(p).toMatchObject({ object: "billing_portal.session", customer: "cus_X", return_url: "https://app.test/settings" });
    expect(p.url).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\//);
  });

  it("does not count a repeated meter event identifier twice", async () => {
    const ev = await stripe.billing.meterEvents.create({
      event_name: "api_calls",
      identifier: "usage-org1-2026-01-01T00",
      payload: { stripe_customer_id: "cus_A", value: "25" },
    });
    expect(ev).toMatchObject({ object: "billing.meter_event", event_name: "api_calls", identifier: "usage-org1-2026-01-01T00" });
    expect(ev.payload).toEqual({ stripe_customer_id: "cus_A", value: "25" });
    expect(typeof ev.timestamp).toBe("number");

    await expect(
      stripe.billing.meterEvents.create({
        event_name: "api_calls",
        identifier: "usage-org1-2026-01-01T00",
        payload: { stripe_customer_id: "cus_A", value: "25" },
      }),
    ).rejects.toMatchObject({ type: "StripeInvalidRequestError", statusCode: 400, code: "resource_already_exists" });

    await stripe.billing.meterEvents.create({
      event_name: "api_calls",
      identifier: "usage-org1-2026-01-01T01",
      payload: { stripe_customer_id: "cus_A", value: "5" },
    });
    await stripe.billing.meterEvents.create({
      event_name: "api_calls",
      payload: { stripe_customer_id: "cus_B", value: "7" },
    });
    await stripe.billing.meterEvents.create({
      event_name: "other",
      payload: { stripe_customer_id: "cus_B", value: "100" },
    });
    expect(fake.meterTotals("api_calls")).toEqual({ cus_A: 30, cus_B: 7 });
    expect(fake.meterTotals()).toEqual({ cus_A: 30, cus_B: 107 });
    expect(fake.duplicateMeterEvents).toHaveLength(1);
  });

  it("failNext makes the SDK throw a Stripe error with the status", async () => {
    fake.failNext(1, { status: 500, method: "POST", path: "/v1/customers" });
    const err = await stripe.customers.create({ email: "x@example.test" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(err).toMatchObject({ statusCode: 500, type: "StripeAPIError" });
    // only one failure was queued
    await expect(stripe.customers.create({ email: "x@example.test" })).resolves.toMatchObject({ object: "customer" });

    fake.failNext(1, { status: 429 });
    await expect(stripe.customers.create({})).rejects.toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    fake.failNext(1, { status: 402, code: "card_declined", message: "Your card was declined." });
    await expect(stripe.customers.create({})).rejects.toMatchObject({ statusCode: 402, code: "card_declined" });

    // a filter that does not match leaves the request alone
    fake.failNext(1, { status: 500, path: "/v1/billing/meter_events" });
    await expect(stripe.customers.create({})).resolves.toBeTruthy();
    fake.clearFaults();
    await expect(
      stripe.billing.meterEvents.create({ event_name: "e", payload: { stripe_customer_id: "cus_A", value: "1" } }),
    ).resolves.toBeTruthy();
  });

  it("hangNext with the SDK's timeout gives a StripeConnectionError", async () => {
    fake.hangNext(1, { path: "/v1/customers" });
    const started = Date.now();
    const err = await stripe.customers.create({}, { timeout: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fake.requests.at(-1)?.outcome).toBe("hang");
  });

  it("answers unknown routes with a 404 in Stripe's envelope", async () => {
    const res = await fetch(`${fake.url}/v1/nope`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("Unrecognized request URL (GET: /v1/nope)");
  });
});

describe("webhook helpers", () => {
  const secret = "whsec_test_secret";

  it("builds API-version shaped objects", () => {
    const sub = subscriptionObject({ customer: "cus_A", items: ["price_pro_monthly"], trialDays: 7, metadata: { org_id: "o" } });
    expect(sub.id).toMatch(/^sub_/);
    expect(sub.status).toBe("trialing");
    expect(sub.items.data[0]!.price.id).toBe("price_pro_monthly");
    expect(sub.items.data[0]!.current_period_end).toBe(sub.trial_end);
    expect(sub).not.toHaveProperty("current_period_end");

    const inv = invoiceObject({ customer: "cus_A", subscription: sub.id, amountDue: 4900, status: "open" });
    expect(inv.id).toMatch(/^in_/);
    expect(inv.parent?.subscription_details?.subscription).toBe(sub.id);
    expect(inv.amount_remaining).toBe(4900);

    const ev = checkoutSessionCompleted({ customer: "cus_A", subscription: sub.id, clientReferenceId: "org_1" });
    expect(ev.type).toBe("checkout.session.completed");
    expect(ev.id).toMatch(/^evt_/);
    expect(ev.data.object).toMatchObject({ object: "checkout.session", status: "complete", subscription: sub.id });
  });

  it("signs with generateTestHeaderString so constructEvent verifies it", () => {
    const event = eventOf("customer.subscription.updated", subscriptionObject({ customer: "cus_A" }), {
      previousAttributes: { status: "trialing" },
    });
    const payload = JSON.stringify(event);
    const header = signedWebhook(payload, secret);
    const verified = stripe.webhooks.constructEvent(payload, header, secret);
    expect(verified.id).toBe(event.id);
    expect(verified.type).toBe("customer.subscription.updated");
    expect(() => stripe.webhooks.constructEvent(payload + " ", header, secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const old = signedWebhook(payload, secret, Math.floor(Date.now() / 1000) - 3600);
    expect(() => stripe.webhooks.constructEvent(payload, old, secret)).toThrow(/timestamp/i);
  });

  it("deliver POSTs a signed event, and tamper breaks the signature", async () => {
    const receiver: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          const ev = stripe.webhooks.constructEvent(Buffer.concat(chunks), req.headers["stripe-signature"] ?? "", secret);
          res.writeHead(200).end(JSON.stringify({ received: ev.id }));
        } catch {
          res.writeHead(400).end("bad signature");
        }
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/stripe`;
    try {
      const event = eventOf("invoice.paid", invoiceObject({ customer: "cus_A", subscription: "sub_1" }));
      const ok = await deliver(url, event, secret);
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body)).toEqual({ received: event.id });
      expect((await deliver(url, event, secret, { tamper: true })).status).toBe(400);
      expect((await deliver(url, event, "whsec_wrong")).status).toBe(400);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
