import { PLAN_RULES } from "../../shared/plans.js";
import { ownOrgId } from "./project-access.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { usageResponse } from "../schemas/usage.js";
import { orgIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "flushLedger" | "ledgerBehind" | "store">;

/** The usage answer the OpenAPI document shows (this route's and the admin's). */
export const USAGE_EXAMPLE = {
  plan: "pro",
  monthly_quota: 50_000,
  used: 12_408,
  remaining: 37_592,
  period: "202611",
  period_end: "2026-12-01T00:00:00.000Z",
  overage: 0,
  overage_reported: 0,
  overage_pending: 0,
  subscription_status: "active",
  trial_end: null,
  behind: null,
};

/**
 * GET /v1/orgs/{orgId}/usage: the usage record. Needs a secret key of that org.
 * Read through the writer, which holds the exact counters. Free to call.
 */
export function usageGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId/usage",
    auth: { kind: "secret" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "Usage of an org",
      description: "The usage record of the key's own org for the current period: plan, quota, credits used and remaining, overage (counted, reported to Stripe, pending) and the subscription's status; in a cluster, `behind` says how far `used` trails this node's answers while it cannot ship them. Another org's id answers 404 NOT_FOUND, as a missing one does.",
      tag: "usage",
      response: usageResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        response: USAGE_EXAMPLE,
      },
    },
    async handle(ctx) {
      const orgId = ownOrgId(ctx.principal!, ctx.params.orgId);
      return { data: await usageOf(deps, orgId, ctx.nowMs), credits: 0 };
    },
  });
}

/** The usage answer of one org (GET /v1/orgs/{orgId}/usage, and the admin's GET /v1/admin/orgs/{orgId}/usage). */
export async function usageOf(deps: Deps, orgId: string, nowMs: number) {
  deps.flushLedger();
  const ack = ackOrThrow(await deps.store.send({ op: "usage.get", orgId, nowMs }));
  const u = ack.usage;
  const org = ack.org;
  const reported = ack.overage.reported;
  const quota = PLAN_RULES[u.plan].monthlyQuota;
  return {
    plan: u.plan,
    monthly_quota: quota,
    used: u.used,
    remaining: quota === null ? null : Math.max(0, quota - u.used),
    period: u.period,
    period_end: new Date(u.reset).toISOString(),
    // Credits beyond the quota this period; what Stripe already acknowledged stays counted
    // even if a plan change since would put it under a larger quota (or none).
    overage: Math.max(u.overage, reported),
    // Of that overage: acknowledged by Stripe's meter, and sent or to be sent (docs/api.md, "Billing").
    overage_reported: reported,
    overage_pending: Math.max(0, u.overage - reported),
    subscription_status: org?.subscription_status ?? "active",
    trial_end: org?.trial_end ?? null,
    // In a cluster with PostgreSQL slow or away: this node's debits that wait in its journal.
    behind: deps.ledgerBehind(),
  };
}
