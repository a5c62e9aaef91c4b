import { PLAN_RULES } from "../../shared/plans.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import { defineRoute } from "../route.js";
import { ackOrThrow } from "./ack.js";

/**
 * GET /v1/orgs/{orgId}/usage: the usage record. Needs a secret key of that org.
 * Read through the writer, which holds the exact counters. Free to call.
 */
export function usageGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId/usage",
    auth: { kind: "secret" },
    async handle(ctx) {
      const orgId = ctx.snap.params[0]!;
      if (ctx.principal!.orgId !== orgId) throw new ApiError("FORBIDDEN", "This key belongs to another org.");
      deps.flushLedger();
      const ack = ackOrThrow(await deps.store.send({ op: "usage.get", orgId, nowMs: ctx.nowMs }));
      const u = ack.usage!;
      const org = ack.org;
      const reported = (ack.value as { reported?: number } | undefined)?.reported ?? 0;
      const quota = PLAN_RULES[u.plan].monthlyQuota;
      return {
        data: {
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
        },
        credits: 0,
      };
    },
  });
}
