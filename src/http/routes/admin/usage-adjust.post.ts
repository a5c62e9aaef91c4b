import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { adjustUsageBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";

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
      const ack = ackOrThrow(await deps.store.send({ op: "usage.adjust", orgId, credits: body.credits, nowMs, reason: body.reason }));
      deps.quota.adjust(orgId, body.credits, nowMs);
      const u = ack.usage!;
      return { data: { org_id: orgId, period: u.period, used: u.used, quota: u.quota } };
    },
  });
}
