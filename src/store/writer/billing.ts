import type { KvDatabase as Database } from "../state-env.js";
import type { Plan, SubscriptionStatus } from "../../shared/plans.js";
import { usagePeriod } from "../../shared/billing-period.js";
import type { OrgRecord, UsageRecord, BillingEvent, BillingOutcome, OverageClaim, OverageState } from "../records.js";

/** Stripe accepts meter events up to 35 days old; past this a report is set aside. */
const UNBILLABLE_AFTER_MS = 34 * 86_400_000;

export interface BillingDbs {
  orgs: Database<OrgRecord, string>;
  usage: Database<UsageRecord, string>;
  /** Processed Stripe event ids -> { type, created, applied }. */
  stripeEvents: Database<{ type: string; created: number; applied: boolean }, string>;
  /** Stripe customer id -> org id. */
  stripeCustomers: Database<string, string>;
  /** `${orgId}:${period}` -> OverageState. */
  overage: Database<OverageState, string>;
}

/** Subscription status -> the org's plan and subscription status (docs/api.md, "Billing"). */
function stateOf(status: string, plan: Plan | null): { plan: Plan; status: SubscriptionStatus } {
  const paid = plan ?? "pro";
  switch (status) {
    case "trialing":
      return { plan: paid, status: "trialing" };
    case "active":
      return { plan: paid, status: "active" };
    case "past_due":
    case "unpaid":
      return { plan: paid, status: "past_due" };
    case "incomplete":
      return { plan: "free", status: "incomplete" };
    default: // canceled, incomplete_expired, paused
      return { plan: "free", status: "canceled" };
  }
}

/**
 * Applies verified Stripe events exactly once (processed ids are recorded in the same
 * transaction) and keeps the latest state when events arrive out of order:
 * - a subscription event older (by Stripe's `created`) than the newest subscription event
 *   applied changes nothing; subscription snapshots are authoritative for plan, status and period;
 * - an invoice event moves the status (past_due / active) only when it is newer than both the
 *   last subscription snapshot and the last invoice event; it never advances the subscription
 *   watermark, so a subscription update delayed behind an invoice still applies;
 * - events of a subscription other than the org's current one do not end the current one (a
 *   trial canceled in the portal ending after the org subscribed again).
 */
export class BillingApplier {
  constructor(
    private readonly dbs: BillingDbs,
    private readonly putOrg: (org: OrgRecord) => void,
    private readonly getOrg: (id: string) => OrgRecord | undefined,
  ) {}

  /** Links a Stripe customer to an org (checkout creates it once). */
  setCustomer(orgId: string, customerId: string): OrgRecord | null {
    const org = this.getOrg(orgId);
    if (!org) return null;
    if (org.stripe_customer_id === customerId) return org;
    const next = { ...org, stripe_customer_id: customerId };
    this.putOrg(next);
    this.dbs.stripeCustomers.putSync(customerId, orgId);
    return next;
  }

  apply(e: BillingEvent, nowMs: number): BillingOutcome {
    if (this.dbs.stripeEvents.get(e.id) !== undefined) return { duplicate: true, applied: false, org: null };
    const orgId = e.orgId ?? (e.customerId ? this.dbs.stripeCustomers.get(e.customerId) : undefined) ?? null;
    const org = orgId ? this.getOrg(orgId) : undefined;
    let outcome: BillingOutcome;
    if (!org) outcome = { duplicate: false, applied: false, org: null, note: "no org for this event" };
    else outcome = this.applyTo(org, e, nowMs);
    this.dbs.stripeEvents.putSync(e.id, { type: e.type, created: e.created, applied: outcome.applied });
    return outcome;
  }

  private applyTo(org: OrgRecord, e: BillingEvent, nowMs: number): BillingOutcome {
    let next: OrgRecord = { ...org };
    if (e.customerId && !org.stripe_customer_id) {
      next.stripe_customer_id = e.customerId;
      this.dbs.stripeCustomers.putSync(e.customerId, org.id);
    }
    const fresh = e.created >= (org.billing_state_at ?? 0);
    const freshInvoice = fresh && e.created >= (org.invoice_state_at ?? 0);
    const isLive = (s: string | undefined) => s === "trialing" || s === "active" || s === "past_due";
    let applied = next.stripe_customer_id !== org.stripe_customer_id;
    switch (e.type) {
      case "checkout.session.completed":
        if (e.checkout?.subscriptionId) next.stripe_subscription_id = e.checkout.subscriptionId;
        applied = true;
        break;
      case "customer.subscription.created":
      case "customer.subscription.updated":
      case "customer.subscription.deleted": {
        const s = e.subscription;
        if (!s || !fresh) break;
        // Another subscription than the current live one ending (or not live) leaves the current one alone.
        const other = !!org.stripe_subscription_id && s.id !== org.stripe_subscription_id && isLive(org.subscription_status);
        if (other && (e.type === "customer.subscription.deleted" || !isLive(stateOf(s.status, s.plan).status))) break;
        const { plan, status } = e.type === "customer.subscription.deleted" ? { plan: "free" as Plan, status: "canceled" as SubscriptionStatus } : stateOf(s.status, s.plan);
        const live = plan !== "free";
        next = {
          ...next,
          plan: org.plan === "enterprise" ? "enterprise" : plan, // an operator's enterprise plan is not Stripe's to change
          subscription_status: status,
          stripe_subscription_id: s.id,
          trial_end: status === "trialing" && s.trialEnd ? new Date(s.trialEnd * 1000).toISOString() : null,
          billing_period_start: live && s.periodStart ? s.periodStart * 1000 : null,
          billing_period_end: live && s.periodEnd ? s.periodEnd * 1000 : null,
          cancel_at_period_end: live ? s.cancelAtPeriodEnd : false,
          billing_state_at: e.created,
        };
        applied = true;
        break;
      }
      case "customer.subscription.trial_will_end":
        next.trial_will_end_notified_at = new Date(nowMs).toISOString();
        applied = true;
        break;
      case "invoice.paid":
        if (!freshInvoice || next.plan === "free" || !this.currentSubscription(org, e)) break;
        if (next.subscription_status === "past_due") next.subscription_status = "active";
        next.invoice_state_at = e.created;
        applied = true;
        break;
      case "invoice.payment_failed":
        if (!freshInvoice || next.plan === "free" || !this.currentSubscription(org, e)) break;
        next.subscription_status = "past_due";
        next.invoice_state_at = e.created;
        applied = true;
        break;
      default:
        break;
    }
    if (applied) this.putOrg(next);
    return { duplicate: false, applied, org: applied ? next : org };
  }

  /**
   * Forgets processed event ids older than 30 days (Stripe retries a delivery for 3 days, so a
   * replay older than that cannot come). At most `limit` per call; returns how many were removed.
   */
  pruneEvents(nowMs: number, limit = 5000): number {
    const cutoff = Math.floor(nowMs / 1000) - 30 * 86_400;
    const old: string[] = [];
    for (const { key, value } of this.dbs.stripeEvents.getRange({})) {
      if (value.created < cutoff) old.push(key);
      if (old.length >= limit) break;
    }
    for (const k of old) this.dbs.stripeEvents.removeSync(k);
    return old.length;
  }

  /** An invoice event concerns the org's current subscription (or names none). */
  private currentSubscription(org: OrgRecord, e: BillingEvent): boolean {
    const sub = e.invoice?.subscriptionId ?? null;
    return sub === null || !org.stripe_subscription_id || sub === org.stripe_subscription_id;
  }

  /**
   * Overage reports to send: for every org with a Stripe customer and every period of its
   * ledger, credits past a paid plan's quota not yet reported. A report already pending is
   * returned unchanged (same range, same identifier), so a resend after a crash or a Stripe error
   * is deduplicated by Stripe and nothing is reported twice; a new report is claimed only after
   * the previous one was acknowledged.
   */
  claimOverage(nowMs: number): OverageClaim[] {
    const out: OverageClaim[] = [];
    for (const { key: customerId, value: orgId } of this.dbs.stripeCustomers.getRange({})) {
      const org = this.getOrg(orgId);
      if (!org) continue;
      const current = usagePeriod(org, nowMs);
      for (const { key, value: usage } of this.dbs.usage.getRange({ start: `${orgId}:`, end: `${orgId}:\uffff` })) {
        const period = key.slice(orgId.length + 1);
        const state = this.dbs.overage.get(key) ?? { reported: 0, pending: null };
        let pending = state.pending;
        if (!pending && usage.overage > state.reported) {
          pending = { from: state.reported, to: usage.overage, identifier: `ovg_${orgId}_${period}_${state.reported}_${usage.overage}` };
          this.dbs.overage.putSync(key, { ...state, pending });
        }
        if (!pending) continue;
        // Stripe refuses meter events stamped more than 35 days back: a report for a period that
        // started longer ago can never be delivered. It is set aside (logged by the reporter as
        // unbillable) rather than retried forever.
        if (period !== current.id && nowMs - periodStartMs(period) > UNBILLABLE_AFTER_MS) {
          this.dbs.overage.putSync(key, { reported: state.reported, pending: null, unbillable: (state.unbillable ?? 0) + (pending.to - pending.from) });
          out.push({ orgId, period, customerId, from: pending.from, to: pending.to, identifier: pending.identifier, timestamp: -1 });
          continue;
        }
        const timestamp = period === current.id ? Math.min(nowMs, current.end - 1000) : periodStartMs(period) + 1000;
        out.push({ orgId, period, customerId, from: pending.from, to: pending.to, identifier: pending.identifier, timestamp });
      }
    }
    return out;
  }

  /** Stripe acknowledged a report: it becomes reported. Idempotent. */
  overageReported(orgId: string, period: string, identifier: string): void {
    const key = `${orgId}:${period}`;
    const state = this.dbs.overage.get(key);
    if (!state?.pending || state.pending.identifier !== identifier) return;
    this.dbs.overage.putSync(key, { reported: state.pending.to, pending: null });
  }

  /** What has been reported and is pending for one org and period (usage record). */
  overageState(orgId: string, period: string): OverageState {
    return this.dbs.overage.get(`${orgId}:${period}`) ?? { reported: 0, pending: null };
  }
}

/** Start (epoch ms) of a ledger period id: `b<seconds>` or YYYYMM (UTC). */
export function periodStartMs(period: string): number {
  if (period.startsWith("b")) return Number(period.slice(1)) * 1000;
  return Date.UTC(Number(period.slice(0, 4)), Number(period.slice(4, 6)) - 1, 1);
}
