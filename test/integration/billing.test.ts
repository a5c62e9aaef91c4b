import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scaled } from "../helpers/time.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { admin, api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { deliver, eventOf, invoiceObject, nowSeconds, startStripeServer, stripeEnv, subscriptionObject, TEST_WEBHOOK_SECRET, type TestStripeServer } from "./helpers/stripe-server.js";

/**
 * Billing end to end: the real stripe SDK inside the service, pointed at a local Stripe-compatible
 * server; webhooks signed with the SDK's own test-header helper.
 */

const SECRET = TEST_WEBHOOK_SECRET;
const DAY = 86_400;
let fake: TestStripeServer;
let server: TestServer;
/** The org endpoints' receiver (outbound webhooks on 127.0.0.1 over http, looked for every 100 ms). */
let receiver: WebhookReceiver;

beforeAll(async () => {
  fake = await startStripeServer();
  receiver = new WebhookReceiver();
  await receiver.start();
  server = await startServer(stripeEnv(fake.port, { FS_WEBHOOK_ALLOW_HTTP: "true", FS_WEBHOOK_ALLOW_PRIVATE: "true", FS_WEBHOOK_POLL_MS: "100" }));
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await fake?.close();
  await receiver?.stop();
});

/** Delivers an event as Stripe does; the answer is checked against the OpenAPI document like api()'s. */
async function webhook(event: Stripe.Event, opts: Parameters<typeof deliver>[3] = {}) {
  const w = await deliver(`${server.url}/webhooks/stripe`, event, SECRET, opts);
  const mismatch = server.contract.check("POST", "/webhooks/stripe", w.status, JSON.parse(w.body));
  if (mismatch) throw new Error(mismatch);
  return w;
}
const usage = (org: { orgId: string; key: string }, headers: Record<string, string> = {}) => api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key, headers });

async function billingOrg() {
  return createOrgWithKey(server, "free", ["billing"]);
}

async function checkout(org: { orgId: string; key: string }, plan = "pro") {
  const r = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { url: string; session_id: string };
}

function customerOf(orgId: string): string {
  const c = [...fake.customers.values()].find((x) => (x.metadata as Record<string, string>).org_id === orgId);
  if (!c) throw new Error(`no Stripe customer for ${orgId}`);
  return c.id;
}

/** A subscription event for an org, as Stripe would send it. */
function subEvent(type: string, org: string, customer: string, opts: Parameters<typeof subscriptionObject>[0] extends infer O ? Partial<O> : never, created: number) {
  const sub = subscriptionObject({ customer, items: ["price_pro", "price_pro_overage"], metadata: { org_id: org, plan: "pro" }, ...opts });
  return { sub, event: eventOf(type, sub, { created }) };
}

describe("checkout and portal", () => {
  it("needs the manage-billing capability (a billing-scope key of that org)", async () => {
    const org = await billingOrg();
    const noScope = await createOrgWithKey(server);
    const r1 = await api(server, "POST", `/v1/orgs/${noScope.orgId}/billing/checkout`, { key: noScope.key, body: { plan: "pro" } });
    expect(r1.status).toBe(403);
    expect(r1.body.error.code).toBe("INSUFFICIENT_SCOPE");
    // Another org's id answers as a missing one.
    const r2 = await api(server, "POST", `/v1/orgs/${noScope.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } });
    expect([r2.status, r2.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const r3 = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/portal`, { key: noScope.key, body: {} });
    expect(r3.status).toBe(403);
    expect((await api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "enterprise" } })).status).toBe(400);
  });

  it("creates the customer once, then a subscription checkout: monthly + metered overage, card required, 14-day trial for pro", async () => {
    const org = await billingOrg();
    const first = await checkout(org);
    expect(first.url).toMatch(/^https:\/\//);
    expect(first.session_id).toMatch(/^cs_/);
    await checkout(org);
    const customers = [...fake.customers.values()].filter((c) => (c.metadata as Record<string, string>).org_id === org.orgId);
    expect(customers).toHaveLength(1);
    const stored = fake.checkoutSessions.get(first.session_id)!;
    expect(stored.params).toMatchObject({ mode: "subscription", customer: customers[0]!.id, client_reference_id: org.orgId, payment_method_collection: "always" });
    expect(stored.priceIds).toEqual(["price_pro", "price_pro_overage"]);
    expect(stored.params.line_items[1].quantity).toBeUndefined(); // metered: no quantity
    expect(stored.trialPeriodDays).toBe(14);
    expect(stored.subscriptionMetadata).toMatchObject({ org_id: org.orgId, plan: "pro" });
    expect(fake.requestsTo("/v1/checkout/sessions", "POST").at(-1)!.stripeVersion).toBe("2026-10-28.endive");
    // business: its own prices, no trial (README).
    const b = await checkout(await billingOrg(), "business");
    const sb = fake.checkoutSessions.get(b.session_id)!;
    expect(sb.priceIds).toEqual(["price_business", "price_business_overage"]);
    expect(sb.trialPeriodDays).toBeUndefined();
  });

  it("portal: a session for the org's customer; before any checkout a clear 409", async () => {
    const org = await billingOrg();
    const none = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/portal`, { key: org.key, body: {} });
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe("NO_BILLING_ACCOUNT");
    await checkout(org);
    const r = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/portal`, { key: org.key, body: { return_url: "https://app.example.com/settings" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.url).toMatch(/^https:\/\//);
    expect(fake.requestsTo("/v1/billing_portal/sessions").at(-1)!.body).toMatchObject({ customer: customerOf(org.orgId), return_url: "https://app.example.com/settings" });
  });

  it("Stripe errors and timeouts give 502 PAYMENT_PROVIDER_ERROR and change nothing", async () => {
    const org = await billingOrg();
    fake.failNext(1, { status: 500, path: "/v1/customers" });
    fake.failNext(1, { status: 500, path: "/v1/customers" });
    const err = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } });
    expect(err.status).toBe(502);
    expect(err.body.error.code).toBe("PAYMENT_PROVIDER_ERROR");
    fake.hangNext(2, { path: "/v1/checkout/sessions" });
    const slow = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } });
    expect(slow.status).toBe(502);
    expect(slow.body.error.message).toMatch(/did not answer in time/);
    // Scoring is not held up meanwhile: a metered call answers at once.
    fake.hangNext(2, { path: "/v1/checkout/sessions" });
    let settled = false;
    const pending = api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } }).finally(() => (settled = true));
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).status).toBe(200);
    expect(settled, "the metered call was answered while the checkout still waited for Stripe").toBe(false);
    await pending;
    fake.clearFaults();
    expect((await usage(org)).body.data).toMatchObject({ plan: "free", subscription_status: "active" });
  });
});

describe("lifecycle webhooks", () => {
  it("free -> checkout -> trialing pro (no charge, pro quota) -> active paid pro at day 14, period from Stripe", async () => {
    const org = await billingOrg();
    const { session_id } = await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    const done = fake.completeCheckoutSession(session_id);
    expect((await webhook(done.event)).status).toBe(200);

    const trialEnd = t0 + 14 * DAY;
    const created = subEvent("customer.subscription.created", org.orgId, customer, { id: done.subscription.id, status: "trialing", trialStart: t0, trialEnd, currentPeriodStart: t0, currentPeriodEnd: trialEnd }, t0 + 1);
    const r = await webhook(created.event);
    expect(r.status, r.body).toBe(200);
    expect(JSON.parse(r.body).data).toMatchObject({ received: true, duplicate: false, applied: true });
    let u = (await usage(org)).body.data;
    expect(u).toMatchObject({ plan: "pro", monthly_quota: 50_000, subscription_status: "trialing", trial_end: new Date(trialEnd * 1000).toISOString() });
    expect(u.period_end).toBe(new Date(trialEnd * 1000).toISOString());

    // Day 14: the trial converts; Stripe sends the new period and the paid invoice.
    const active = subEvent("customer.subscription.updated", org.orgId, customer, { id: done.subscription.id, status: "active", trialStart: t0, trialEnd, currentPeriodStart: trialEnd, currentPeriodEnd: trialEnd + 30 * DAY }, t0 + 2);
    expect((await webhook(active.event)).status).toBe(200);
    const paid = eventOf("invoice.paid", invoiceObject({ customer, subscription: done.subscription.id, status: "paid", amountDue: 2500 }), { created: t0 + 3 });
    expect((await webhook(paid)).status).toBe(200);
    u = (await usage(org, { "x-fs-test-now": String((trialEnd + DAY) * 1000) })).body.data;
    expect(u).toMatchObject({ plan: "pro", subscription_status: "active", trial_end: null });
    expect(u.period_end).toBe(new Date((trialEnd + 30 * DAY) * 1000).toISOString());

    // Replays change nothing; an older event arriving late does not undo the newer state.
    const again = await webhook(created.event);
    expect(JSON.parse(again.body).data).toMatchObject({ duplicate: true, applied: false });
    const stale = subEvent("customer.subscription.updated", org.orgId, customer, { id: done.subscription.id, status: "trialing", trialStart: t0, trialEnd, currentPeriodStart: t0, currentPeriodEnd: trialEnd }, t0 + 1);
    expect(JSON.parse((await webhook(stale.event)).body).data).toMatchObject({ duplicate: false, applied: false });
    expect((await usage(org)).body.data.subscription_status).toBe("active");
  });

  it("usage resets at Stripe's billing-period boundary, not the calendar month", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    const start = t0 - 10 * DAY;
    const end = t0 + 5 * DAY;
    const ev = subEvent("customer.subscription.updated", org.orgId, customer, { id: `sub_period_${org.orgId}`, status: "active", currentPeriodStart: start, currentPeriodEnd: end }, t0);
    expect((await webhook(ev.event)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).status).toBe(200);
    expect((await usage(org)).body.data).toMatchObject({ used: 3, period_end: new Date(end * 1000).toISOString() });
    // Stripe renews the period; after its start the count begins again.
    const next = subEvent("customer.subscription.updated", org.orgId, customer, { id: `sub_period_${org.orgId}`, status: "active", currentPeriodStart: end, currentPeriodEnd: end + 30 * DAY }, t0 + 1);
    expect((await webhook(next.event)).status).toBe(200);
    const after = { "x-fs-test-now": String((end + 60) * 1000) };
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key, headers: after })).status).toBe(200);
    expect((await usage(org, after)).body.data).toMatchObject({ used: 1, period_end: new Date((end + 30 * DAY) * 1000).toISOString() });
  });

  it("cancel in the portal before the trial ends: no conversion, back to free and canceled", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    const trialEnd = t0 + 14 * DAY;
    const base = { id: `sub_cancel_${org.orgId}`, status: "trialing" as const, trialStart: t0, trialEnd, currentPeriodStart: t0, currentPeriodEnd: trialEnd };
    await webhook(subEvent("customer.subscription.created", org.orgId, customer, base, t0).event);
    const canceling = subEvent("customer.subscription.updated", org.orgId, customer, { ...base, cancelAtPeriodEnd: true }, t0 + 60);
    await webhook(canceling.event);
    expect((await usage(org)).body.data).toMatchObject({ plan: "pro", subscription_status: "trialing" });
    await webhook(eventOf("customer.subscription.trial_will_end", canceling.sub, { created: t0 + 11 * DAY }));
    const deleted = subEvent("customer.subscription.deleted", org.orgId, customer, { ...base, status: "canceled", canceledAt: trialEnd, endedAt: trialEnd }, trialEnd);
    expect((await webhook(deleted.event)).status).toBe(200);
    const u = (await usage(org)).body.data;
    expect(u).toMatchObject({ plan: "free", monthly_quota: 10_000, subscription_status: "canceled", trial_end: null });
    expect(u.period).toMatch(/^\d{6}$/);
  });

  it("payment failure: past_due (still pro, never blocked), then paid: active again; business has its own quota", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    await webhook(subEvent("customer.subscription.created", org.orgId, customer, { status: "active", currentPeriodStart: t0, currentPeriodEnd: t0 + 30 * DAY }, t0).event);
    await webhook(eventOf("invoice.payment_failed", invoiceObject({ customer, status: "open", amountDue: 2500 }), { created: t0 + 10 }));
    expect((await usage(org)).body.data).toMatchObject({ plan: "pro", subscription_status: "past_due" });
    await webhook(eventOf("invoice.paid", invoiceObject({ customer, status: "paid", amountDue: 2500 }), { created: t0 + 20 }));
    expect((await usage(org)).body.data.subscription_status).toBe("active");

    const biz = await billingOrg();
    await checkout(biz, "business");
    const bc = customerOf(biz.orgId);
    const sub = subscriptionObject({ customer: bc, status: "active", items: ["price_business", "price_business_overage"], metadata: { org_id: biz.orgId } });
    await webhook(eventOf("customer.subscription.created", sub, { created: t0 }));
    expect((await usage(biz)).body.data).toMatchObject({ plan: "business", monthly_quota: 300_000, subscription_status: "active" });
  });

  it("a bad signature is 400 and changes nothing; an unconfigured service says so", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const ev = subEvent("customer.subscription.created", org.orgId, customer, { status: "active" }, nowSeconds());
    const tampered = await webhook(ev.event, { tamper: true });
    expect(tampered.status).toBe(400);
    expect(JSON.parse(tampered.body).error.code).toBe("INVALID_SIGNATURE");
    const old = await webhook(ev.event, { timestamp: nowSeconds() - 3600 });
    expect(old.status).toBe(400);
    const missing = await webhook(ev.event, { signature: null });
    expect(missing.status).toBe(400);
    expect((await usage(org)).body.data.plan).toBe("free");
    // Events are larger than API requests may be (64 KB): up to 1 MiB is read.
    const big = eventOf("customer.subscription.trial_will_end", { ...ev.sub, metadata: { ...ev.sub.metadata, note: "x".repeat(100_000) } }, { created: nowSeconds() - 5 });
    expect((await webhook(big)).status).toBe(200);
    expect((await fetch(`${server.url}/webhooks/stripe`)).status).toBe(405);
    // The real one still applies afterwards (nothing was recorded for the refused ones).
    expect((await webhook(ev.event)).status).toBe(200);
    expect((await usage(org)).body.data.plan).toBe("pro");

    const bare = await startServer();
    try {
      const o = await createOrgWithKey(bare, "free", ["billing"]);
      const r = await api(bare, "POST", `/v1/orgs/${o.orgId}/billing/checkout`, { key: o.key, body: { plan: "pro" } });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe("BILLING_NOT_CONFIGURED");
      const w = await deliver(`${bare.url}/webhooks/stripe`, ev.event, SECRET);
      expect(w.status).toBe(503);
    } finally {
      await bare.stop();
      bare.cleanup();
    }
  });

  it("enterprise is set by an operator: unmetered, and Stripe events do not change its plan", async () => {
    const org = await billingOrg();
    await checkout(org);
    expect((await admin(server, "PATCH", `/v1/admin/orgs/${org.orgId}`, { plan: "enterprise" })).status).toBe(200);
    await webhook(subEvent("customer.subscription.updated", org.orgId, customerOf(org.orgId), { status: "active" }, nowSeconds()).event);
    expect((await usage(org)).body.data).toMatchObject({ plan: "enterprise", monthly_quota: null, overage: 0 });
  });
});

describe("outbound webhooks from Stripe's events", () => {
  /** What the org's endpoint at `path` received, verified with its secret (standardwebhooks), in arrival order. */
  const verifiedAt = (path: string, secret: string) =>
    receiver.received
      .filter((r) => r.path === path)
      .map((r) => ({ ...r, event: new Webhook(secret).verify(r.body, { "webhook-id": r.id, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature }) as { type: string; data: Record<string, unknown> } }));

  it("a signed subscription event gives the org's endpoint one signed subscription.changed (and plan.changed), however often Stripe delivers it", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const path = `/hook/${org.orgId}`;
    const made = await api(server, "POST", `/v1/orgs/${org.orgId}/webhooks`, { key: org.key, body: { url: `${receiver.url}/${org.orgId}`, events: ["subscription.changed", "plan.changed"] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const secret = made.body.data.secret as string;
    const t0 = nowSeconds();
    const id = `sub_hooks_${org.orgId}`;
    const trialEnd = t0 + 14 * DAY;
    const base = { id, status: "trialing" as const, trialStart: t0, trialEnd, currentPeriodStart: t0, currentPeriodEnd: trialEnd };
    const created = subEvent("customer.subscription.created", org.orgId, customer, base, t0);
    const canceling = subEvent("customer.subscription.updated", org.orgId, customer, { ...base, cancelAtPeriodEnd: true }, t0 + 60);
    const deleted = subEvent("customer.subscription.deleted", org.orgId, customer, { ...base, status: "canceled", canceledAt: t0 + 120, endedAt: t0 + 120 }, t0 + 120);
    // Stripe retries an event it did not see acknowledged: each is delivered twice, at once and again after.
    for (const { event } of [created, canceling, deleted]) {
      const both = await Promise.all([webhook(event), webhook(event)]);
      expect(both.map((w) => w.status)).toEqual([200, 200]);
      expect(both.map((w) => JSON.parse(w.body).data.duplicate).sort()).toEqual([false, true]);
      expect(JSON.parse((await webhook(event)).body).data).toMatchObject({ duplicate: true, applied: false });
    }
    const changes = [
      { type: "plan.changed", data: { org_id: org.orgId, plan: "pro", previous_plan: "free", livemode: true } },
      { type: "subscription.changed", data: { org_id: org.orgId, plan: "pro", subscription_id: id, status: "trialing", previous_status: "active", cancel_at_period_end: false, livemode: true } },
      { type: "subscription.changed", data: { org_id: org.orgId, plan: "pro", subscription_id: id, status: "trialing", previous_status: "trialing", cancel_at_period_end: true, livemode: true } },
      { type: "plan.changed", data: { org_id: org.orgId, plan: "free", previous_plan: "pro", livemode: true } },
      { type: "subscription.changed", data: { org_id: org.orgId, plan: "free", subscription_id: id, status: "canceled", previous_status: "trialing", cancel_at_period_end: false, livemode: true } },
    ];
    await expect.poll(() => verifiedAt(path, secret).filter((r) => r.status === 200).length, { timeout: scaled(20_000) }).toBeGreaterThanOrEqual(changes.length);
    // Nothing more is on its way: the endpoint has no entry waiting.
    await expect.poll(async () => (await api(server, "GET", `/v1/orgs/${org.orgId}/webhooks`, { key: org.key })).body.data.items[0].pending, { timeout: scaled(20_000) }).toBe(0);
    const got = verifiedAt(path, secret);
    expect(got.map((r) => r.event)).toEqual(changes.map((c) => ({ ...c, timestamp: expect.any(String) })));
    // One webhook-id per event, delivered once.
    expect(new Set(got.map((r) => r.id)).size).toBe(changes.length);
  });
});

describe("ordering and subscriptions", () => {
  it("a subscription update delayed behind a newer invoice still applies; a second checkout is refused", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const id = `sub_delay_${org.orgId}`;
    const t0 = nowSeconds();
    const trialEnd = t0 + 14 * DAY;
    await webhook(subEvent("customer.subscription.created", org.orgId, customer, { id, status: "trialing", trialStart: t0, trialEnd, currentPeriodStart: t0, currentPeriodEnd: trialEnd }, t0).event);
    const converted = subEvent("customer.subscription.updated", org.orgId, customer, { id, status: "active", trialStart: t0, trialEnd, currentPeriodStart: trialEnd, currentPeriodEnd: trialEnd + 30 * DAY }, trialEnd);
    // Stripe's first delivery of the conversion fails; the invoice (an hour later) arrives first.
    await webhook(eventOf("invoice.paid", invoiceObject({ customer, subscription: id, status: "paid", amountDue: 2500 }), { created: trialEnd + 3600 }));
    expect((await webhook(converted.event)).status).toBe(200);
    const u = (await usage(org, { "x-fs-test-now": String((trialEnd + DAY) * 1000) })).body.data;
    expect(u).toMatchObject({ plan: "pro", subscription_status: "active", trial_end: null, period_end: new Date((trialEnd + 30 * DAY) * 1000).toISOString() });
    const again = await api(server, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "business" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("ALREADY_SUBSCRIBED");
  });

  it("the end of an old subscription does not end the org's current one", async () => {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    await webhook(subEvent("customer.subscription.created", org.orgId, customer, { id: `sub_old_${org.orgId}`, status: "trialing", trialStart: t0, trialEnd: t0 + 14 * DAY, cancelAtPeriodEnd: true }, t0).event);
    const biz = subscriptionObject({ id: `sub_new_${org.orgId}`, customer, status: "active", items: ["price_business", "price_business_overage"], metadata: { org_id: org.orgId } });
    await webhook(eventOf("customer.subscription.created", biz, { created: t0 + 60 }));
    expect((await usage(org)).body.data).toMatchObject({ plan: "business", subscription_status: "active" });
    const oldEnds = subEvent("customer.subscription.deleted", org.orgId, customer, { id: `sub_old_${org.orgId}`, status: "canceled" }, t0 + 14 * DAY);
    expect((await webhook(oldEnds.event)).status).toBe(200);
    expect((await usage(org)).body.data).toMatchObject({ plan: "business", subscription_status: "active" });
  });
});

describe("metered overage", () => {
  async function proWithCustomer() {
    const org = await billingOrg();
    await checkout(org);
    const customer = customerOf(org.orgId);
    const t0 = nowSeconds();
    await webhook(subEvent("customer.subscription.created", org.orgId, customer, { status: "active", currentPeriodStart: t0 - DAY, currentPeriodEnd: t0 + 29 * DAY }, t0).event);
    return { org, customer };
  }

  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    await expect.poll(check, { message: `waiting for ${what}`, timeout: scaled(30_000), interval: 50 }).toBe(true);
  }

  it("reports credits past the quota to the meter, in batches, never blocking; usage shows reported and pending", async () => {
    const { org, customer } = await proWithCustomer();
    expect((await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 50_000, reason: "test" })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).status).toBe(200);
    await until(async () => fake.meterTotals()[customer] === 5, "5 credits reported");
    await until(async () => (await usage(org)).body.data.overage_reported === 5, "usage to show 5 reported");
    expect((await usage(org)).body.data).toMatchObject({ used: 50_005, overage: 5, overage_reported: 5, overage_pending: 0 });
    for (let i = 0; i < 3; i++) await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    await until(async () => fake.meterTotals()[customer] === 8, "8 credits reported");
    const events = fake.meterEvents.filter((e) => e.payload.stripe_customer_id === customer);
    expect(events.every((e) => e.event_name === "fraudscore_overage_credits" && /^ovg_/.test(e.identifier))).toBe(true);
  });

  it("a Stripe error leaves the report pending and it is retried, never double-counted", async () => {
    const { org, customer } = await proWithCustomer();
    fake.failNext(3, { status: 500, path: "/v1/billing/meter_events" });
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 50_007, reason: "test" });
    await until(async () => fake.meterTotals()[customer] === 7, "7 credits reported after errors");
    expect((await usage(org)).body.data).toMatchObject({ overage: 7, overage_reported: 7, overage_pending: 0 });
    // Later rounds report only what is new: one more credit makes 8, the 7 are not sent again.
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 1, reason: "test" });
    await until(async () => (await usage(org)).body.data.overage_reported === 8, "the 8th credit reported");
    expect(fake.meterTotals()[customer]).toBe(8);
    expect(fake.duplicateMeterEvents.filter((d) => d.payload?.stripe_customer_id === customer)).toEqual([]);
  });

  it("a crash between receiving overage and reporting it: the same report is resent after restart and counted once", async () => {
    const { org, customer } = await proWithCustomer();
    // Stripe does not answer: the report is claimed (pending) and in flight when the process dies.
    fake.hangNext(10, { path: "/v1/billing/meter_events" });
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 50_004, reason: "test" });
    await until(async () => fake.requestsTo("/v1/billing/meter_events").some((r) => r.outcome === "hang" && r.body.payload?.stripe_customer_id === customer), "a report in flight");
    const inFlight = fake.requestsTo("/v1/billing/meter_events").find((r) => r.body.payload?.stripe_customer_id === customer)!;
    const identifier = inFlight.body.identifier as string;
    await server.kill9();
    fake.clearFaults();
    // Suppose Stripe did record it although we never heard back: send it as the reporter did.
    const direct = new Stripe("sk_test_fraudscore", fake.sdkOptions());
    await direct.billing.meterEvents.create({ event_name: "fraudscore_overage_credits", identifier, payload: inFlight.body.payload as Record<string, string> });
    await server.restart();
    await until(async () => (await usage(org)).body.data.overage_reported === 4, "the pending report acknowledged after restart");
    expect(fake.meterTotals()[customer]).toBe(4);
    expect(fake.duplicateMeterEvents.some((d) => d.identifier === identifier)).toBe(true);
  });
});

describe("webhook input", () => {
  /** Sends `payload` (any text) signed with the webhook secret, as Stripe would. */
  const signedRaw = (payload: string, opts: { signature?: string | null; headers?: Record<string, string> } = {}) =>
    fetch(`${server.url}/webhooks/stripe`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(opts.signature === null ? {} : { "stripe-signature": opts.signature ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) }),
        ...opts.headers,
      },
      body: payload,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error: { code: string; message: string } | null } }));

  const base = () => JSON.parse(JSON.stringify(eventOf("customer.subscription.updated", subscriptionObject({ id: "sub_x", customer: "cus_x", status: "active", metadata: { org_id: "org_x" } })))) as Record<string, any>;

  it("refuses signed events whose envelope or used fields are missing, of the wrong type or too long: 400, recorded nowhere", async () => {
    const cases: Array<[string, (e: Record<string, any>) => unknown]> = [
      ["body.id", (e) => ({ ...e, id: "evt_" + "x".repeat(3000) })],
      ["body.id", (e) => ({ ...e, id: null })],
      ["body.id", (e) => ({ ...e, id: 42 })],
      ["body.type", (e) => ({ ...e, type: null })],
      ["body.type", (e) => ({ ...e, type: "x".repeat(500) })],
      ["body.created", (e) => ({ ...e, created: "yesterday" })],
      ["body.data", (e) => ({ ...e, data: null })],
      ["body.data.object", (e) => ({ ...e, data: { object: "a string" } })],
      ["body.data.object", (e) => ({ ...e, data: { object: [1, 2] } })],
      ["body.data.object.metadata", (e) => ({ ...e, data: { object: { ...e.data.object, metadata: "org_x" } } })],
      ["body.data.object.metadata.org_id", (e) => ({ ...e, data: { object: { ...e.data.object, metadata: { org_id: "o".repeat(3000) } } } })],
      ["body.data.object.items.data", (e) => ({ ...e, data: { object: { ...e.data.object, items: { data: "not an array" } } } })],
      ["body.data.object.items.data.0.current_period_end", (e) => ({ ...e, data: { object: { ...e.data.object, items: { data: [{ current_period_end: "soon" }] } } } })],
      ["body.data.object.customer.id", (e) => ({ ...e, data: { object: { ...e.data.object, customer: { id: 7 } } } })],
      ["body.data.object.status", (e) => ({ ...e, data: { object: { ...e.data.object, status: ["active"] } } })],
      ["body.data.object.parent", (e) => ({ ...e, type: "invoice.paid", data: { object: { ...e.data.object, parent: 3 } } })],
      ["body", () => null],
      ["body", () => [1, 2, 3]],
    ];
    for (const [path, make] of cases) {
      const r = await signedRaw(JSON.stringify(make(base())));
      expect(r.status, path).toBe(400);
      // The event is the request's body: the field is named as any body's (error.param, error.problems).
      expect(r.body.error, path).toMatchObject({ code: "VALIDATION_ERROR", param: path, problems: [{ param: path, message: expect.any(String) }] });
    }
    // Signed but not JSON at all.
    const text = await signedRaw("not json {");
    expect([text.status, text.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
    // None was recorded: the same id, well formed now, is applied as new.
    const good = base();
    good.id = "evt_after_refusals";
    const ok = await signedRaw(JSON.stringify(good));
    expect(ok.status).toBe(200);
    expect((ok.body as unknown as { data: { duplicate: boolean } }).data.duplicate).toBe(false);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("answers an unsigned or malformed-signature call at once, without reading its body", async () => {
    const { request } = await import("node:http");
    const target = new URL(`${server.url}/webhooks/stripe`);
    // Declares 1 MB and sends none of it: the answer must come anyway.
    const answerWithoutBody = (headers: Record<string, string>) =>
      new Promise<{ status: number; code: string }>((resolve, reject) => {
        const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers: { "content-type": "application/json", "content-length": "1000000", ...headers } }, (res) => {
          let text = "";
          res.on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { error: { code: string } }).error.code }));
        });
        req.on("error", reject);
        req.setTimeout(5_000, () => reject(new Error("no answer without the body")));
        req.flushHeaders();
      });
    expect(await answerWithoutBody({})).toEqual({ status: 400, code: "INVALID_SIGNATURE" });
    expect(await answerWithoutBody({ "stripe-signature": "garbage" })).toEqual({ status: 400, code: "INVALID_SIGNATURE" });
    expect(await answerWithoutBody({ "stripe-signature": `t=1,v1=${"a".repeat(2000)}` })).toEqual({ status: 400, code: "INVALID_SIGNATURE" });
    const bare = await startServer();
    try {
      const unconfigured = new URL(`${bare.url}/webhooks/stripe`);
      const r = await new Promise<number>((resolve, reject) => {
        const req = request({ host: unconfigured.hostname, port: unconfigured.port, path: unconfigured.pathname, method: "POST", headers: { "content-length": "1000000", "stripe-signature": `t=1,v1=${"a".repeat(64)}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.setTimeout(5_000, () => reject(new Error("no answer without the body")));
        req.flushHeaders();
      });
      expect(r).toBe(503);
    } finally {
      await bare.stop();
      bare.cleanup();
    }
  });
});
