import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IntentApplier } from "../../src/store/writer/apply.js";
import type { BillingEvent } from "../../src/store/records.js";
import { openState, type LmdbStateDbs } from "../../src/store/state-env.js";

/** The writer's side of billing on a real LMDB: exactly once, ordering, subscriptions, overage cursor. */
let dir: string;
let dbs: LmdbStateDbs;
let applier: IntentApplier;
const NOW = 1_800_000_000_000;
const S = Math.floor(NOW / 1000);
const tx = <T>(fn: () => T): T => dbs.root.transactionSync(fn);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-billing-"));
  dbs = openState(dir, false);
  applier = new IntentApplier(dbs);
  tx(() => applier.apply({ op: "org.create", org: { id: "org_b", name: "b", plan: "free", subscription_status: "active", trial_end: null, created_at: "" } }));
  tx(() => applier.apply({ op: "billing.customer", orgId: "org_b", customerId: "cus_1" }));
});
afterEach(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

function subEvent(id: string, type: string, created: number, status: string, sub = "sub_1", plan: "pro" | "business" = "pro"): BillingEvent {
  return { id, type, created, orgId: null, customerId: "cus_1", subscription: { id: sub, status, plan, trialEnd: null, periodStart: S - 86_400, periodEnd: S + 86_400 * 29, cancelAtPeriodEnd: false } };
}
const apply = (e: BillingEvent) => tx(() => applier.billing.apply(e, NOW));
const state = () => dbs.orgs.get("org_b")!;

describe("BillingApplier", () => {
  it("applies an event once; a replay changes nothing", () => {
    expect(apply(subEvent("evt_1", "customer.subscription.created", S, "active"))).toMatchObject({ duplicate: false, applied: true });
    expect(state()).toMatchObject({ plan: "pro", subscription_status: "active", stripe_subscription_id: "sub_1" });
    expect(apply(subEvent("evt_1", "customer.subscription.created", S, "canceled"))).toMatchObject({ duplicate: true, applied: false });
    expect(state().plan).toBe("pro");
  });

  it("an older subscription event never undoes a newer one; invoices do not block a delayed update", () => {
    apply(subEvent("evt_a", "customer.subscription.updated", S + 10, "past_due"));
    apply(subEvent("evt_b", "customer.subscription.updated", S + 5, "active"));
    expect(state().subscription_status).toBe("past_due");
    apply({ id: "evt_inv", type: "invoice.paid", created: S + 100, orgId: null, customerId: "cus_1", invoice: { subscriptionId: "sub_1" } });
    expect(state().subscription_status).toBe("active");
    // A subscription update created before that invoice but delivered after it still applies.
    apply({ ...subEvent("evt_c", "customer.subscription.updated", S + 50, "active"), subscription: { ...subEvent("x", "", 0, "active").subscription!, periodEnd: S + 86_400 * 60 } });
    expect(state().billing_period_end).toBe((S + 86_400 * 60) * 1000);
    // An older invoice failure after a newer payment changes nothing.
    apply({ id: "evt_old_fail", type: "invoice.payment_failed", created: S + 90, orgId: null, customerId: "cus_1", invoice: { subscriptionId: "sub_1" } });
    expect(state().subscription_status).toBe("active");
  });

  it("the end of another subscription does not end the current one", () => {
    apply(subEvent("evt_1", "customer.subscription.created", S, "active", "sub_new", "business"));
    apply(subEvent("evt_2", "customer.subscription.deleted", S + 10, "canceled", "sub_old"));
    expect(state()).toMatchObject({ plan: "business", subscription_status: "active", stripe_subscription_id: "sub_new" });
    apply(subEvent("evt_3", "customer.subscription.deleted", S + 20, "canceled", "sub_new"));
    expect(state()).toMatchObject({ plan: "free", subscription_status: "canceled", billing_period_end: null });
  });

  it("claims overage once per range, resends a pending claim unchanged, and moves the cursor only on acknowledgement", () => {
    apply(subEvent("evt_1", "customer.subscription.created", S, "active"));
    const period = `b${S - 86_400}`;
    tx(() => applier.applyCharges([{ seq: 1, orgId: "org_b", credits: 50_010, period }]));
    const first = tx(() => applier.billing.claimOverage(NOW));
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ orgId: "org_b", customerId: "cus_1", from: 0, to: 10 });
    tx(() => applier.applyCharges([{ seq: 2, orgId: "org_b", credits: 5, period }]));
    const again = tx(() => applier.billing.claimOverage(NOW));
    expect(again[0]!.identifier).toBe(first[0]!.identifier); // still pending: the same report
    tx(() => applier.billing.overageReported("org_b", period, first[0]!.identifier));
    expect(applier.billing.overageState("org_b", period)).toEqual({ reported: 10, pending: null });
    const next = tx(() => applier.billing.claimOverage(NOW));
    expect(next[0]).toMatchObject({ from: 10, to: 15 });
  });

  it("forgets processed event ids after 30 days", () => {
    apply(subEvent("evt_old", "customer.subscription.created", S - 40 * 86_400, "active"));
    apply(subEvent("evt_new", "customer.subscription.updated", S, "active"));
    expect(tx(() => applier.billing.pruneEvents(NOW))).toBe(1);
    expect(dbs.stripeEvents.get("evt_old")).toBeUndefined();
    expect(dbs.stripeEvents.get("evt_new")).toBeDefined();
  });
});
