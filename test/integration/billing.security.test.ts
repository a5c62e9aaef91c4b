import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { deliver, eventOf, nowSeconds, startStripeServer, stripeEnv, subscriptionObject, TEST_WEBHOOK_SECRET, type TestStripeServer } from "./helpers/stripe-server.js";

/**
 * Issue 25, finding 10: signed webhook events with a trial end or billing period of 1e300 or
 * -1e15 made the writer fail (`Invalid time value`) and the webhook answer 503, so Stripe retried
 * forever; dates and signature timestamps years ahead were accepted. Dates outside 2000-01-01 ..
 * now + 10 years are a 400 now, recorded nowhere, and a signature stamped more than 300 s ahead
 * is refused like one more than 300 s old.
 */

const DAY = 86_400;
const YEAR = 365 * DAY;
let fake: TestStripeServer;
let server: TestServer;

beforeAll(async () => {
  fake = await startStripeServer();
  server = await startServer(stripeEnv(fake.port));
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await fake?.close();
});

async function webhook(event: Stripe.Event, opts: Parameters<typeof deliver>[3] = {}) {
  const w = await deliver(`${server.url}/webhooks/stripe`, event, TEST_WEBHOOK_SECRET, opts);
  const body = JSON.parse(w.body);
  const mismatch = server.contract.check("POST", "/webhooks/stripe", w.status, body);
  if (mismatch) throw new Error(mismatch);
  return { status: w.status, code: body.error?.code as string | undefined, message: (body.error?.message ?? "") as string };
}

/** A subscription event of `orgId` on pro, with the given dates (epoch seconds). */
function subscriptionEvent(orgId: string, dates: { created?: number; trialEnd?: number; periodStart?: number; periodEnd?: number }, id?: string) {
  const now = nowSeconds();
  const trialing = dates.trialEnd !== undefined;
  const sub = subscriptionObject({
    customer: `cus_${orgId}`,
    items: ["price_pro", "price_pro_overage"],
    metadata: { org_id: orgId, plan: "pro" },
    status: trialing ? "trialing" : "active",
    ...(trialing ? { trialStart: now, trialEnd: dates.trialEnd } : {}),
    currentPeriodStart: dates.periodStart ?? now,
    currentPeriodEnd: dates.periodEnd ?? now + 30 * DAY,
  });
  return eventOf("customer.subscription.updated", sub, { created: dates.created ?? now, ...(id ? { id } : {}) });
}

describe("webhook dates out of range", () => {
  it("a trial end, period bound or event date before 2000 or more than 10 years ahead is 400 VALIDATION_ERROR, never 503, recorded nowhere", async () => {
    const org = await createOrgWithKey(server);
    const now = nowSeconds();
    const cases: Array<[string, Parameters<typeof subscriptionEvent>[1]]> = [
      ["trial_end", { trialEnd: 1e300 }],
      ["trial_end", { trialEnd: -1e15 }],
      ["trial_end", { trialEnd: now + 11 * YEAR }],
      ["items.data.0.current_period_end", { periodEnd: 1e300 }],
      ["items.data.0.current_period_start", { periodStart: -1e15 }],
      ["items.data.0.current_period_start", { periodStart: 900_000_000 }], // 1998
      ["body.created", { created: now + 11 * YEAR }],
      ["body.created", { created: 1 }],
    ];
    for (const [i, [field, dates]] of cases.entries()) {
      const r = await webhook(subscriptionEvent(org.orgId, dates, `evt_range_${org.orgId}_${i}`));
      expect([field, r.status, r.code], JSON.stringify(dates)).toEqual([field, 400, "VALIDATION_ERROR"]);
      expect(r.message).toContain(field);
    }
    expect((await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.plan).toBe("free");
    // Dates inside the range apply (9 years ahead included), under an id a refused event used: it was not recorded.
    const ok = await webhook(subscriptionEvent(org.orgId, { trialEnd: now + 14 * DAY, periodEnd: now + 9 * YEAR }, `evt_range_${org.orgId}_0`));
    expect(ok.status).toBe(200);
    const usage = await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toMatchObject({ plan: "pro", subscription_status: "trialing" });
  });

  it("a signature stamped more than 300 s ahead is refused like an expired one", async () => {
    const org = await createOrgWithKey(server);
    const event = subscriptionEvent(org.orgId, {});
    for (const timestamp of [nowSeconds() + 3600, nowSeconds() + 10 * YEAR, nowSeconds() - 3600]) {
      const r = await webhook(event, { timestamp });
      expect([timestamp, r.status, r.code]).toEqual([timestamp, 400, "INVALID_SIGNATURE"]);
    }
    expect((await webhook(event, { timestamp: nowSeconds() + 60 })).status).toBe(200);
  });
});
