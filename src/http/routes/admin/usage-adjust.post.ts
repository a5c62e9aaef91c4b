import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { adjustUsageBody } from "../../schemas/admin.js";

/**
 * POST /v1/admin/orgs/{orgId}/usage/adjust {credits, reason}: an operator's correction of the
 * current period's used credits (negative to give credits back).
 */
export function adminUsageAdjustPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/usage/adjust",
    auth: { kind: "admin" },
    body: adjustUsageBody,
    async handle({ body, snap, nowMs }) {
      const orgId = snap.params[0]!;
      const u = await deps.quota.adjust(orgId, body.credits, nowMs);
      deps.log.info("usage adjusted", { org_id: orgId, credits: body.credits, reason: body.reason, period: u.period });
      return { data: { org_id: orgId, period: u.period, used: u.used, quota: u.quota } };
    },
  });
}
