import type { AppDeps } from "../../deps.js";
import type { UsageAfterAdjust } from "../../../front/quota.js";
import { defineRoute } from "../../route.js";
import { adjustUsageBody, usageAdjustResponse } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "log" | "quota">;

/**
 * POST /v1/admin/orgs/{orgId}/usage/adjust {credits, reason}: an operator's correction of the
 * current period's used credits (negative to give credits back).
 */
export function adminUsageAdjustPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/usage/adjust",
    auth: { kind: "admin" },
    body: adjustUsageBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Correct an org's usage",
      description: "Adds `credits` to the current period's used credits (negative gives credits back; used never goes below 0), with a reason for the log. Takes effect for the next call.",
      tag: "admin",
      response: usageAdjustResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        body: { credits: -500, reason: "refund for an outage on 2026-11-19" },
        response: { org_id: "org_3kT9xQ2mLbVfZ8aW", period: "202611", used: 11_908, quota: 50_000 },
      },
    },
    async handle({ body, params, nowMs, recordAnswer }) {
      const orgId = params.orgId;
      const dataOf = (u: UsageAfterAdjust) => ({ org_id: orgId, period: u.period, used: u.used, quota: u.quota });
      // With an Idempotency-Key the answer is journaled in the adjustment's own line.
      const u = await deps.quota.adjust(orgId, body.credits, nowMs, recordAnswer && ((after) => recordAnswer(200, dataOf(after))));
      deps.log.info("usage adjusted", { org_id: orgId, credits: body.credits, reason: body.reason, period: u.period });
      return { data: dataOf(u), recorded: recordAnswer ? { seq: u.seq } : undefined };
    },
  });
}
