import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { usageResponse } from "../../schemas/usage.js";
import { orgIdParam } from "../../schemas/params.js";
import { USAGE_EXAMPLE, usageOf } from "../usage.get.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "flushLedger" | "ledgerBehind" | "store">;

/** GET /v1/admin/orgs/{orgId}/usage: any org's usage record, for the operator (the admin CLI's `usage show`). */
export function adminUsageGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/orgs/:orgId/usage",
    auth: { kind: "admin" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "Usage of any org",
      description: "What GET /v1/orgs/{orgId}/usage answers the org's own key, for any org, with the admin token.",
      tag: "admin",
      response: usageResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        response: USAGE_EXAMPLE,
      },
    },
    async handle({ params, nowMs }) {
      return { data: await usageOf(deps, params.orgId, nowMs) };
    },
  });
}
