import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { defineRoute } from "../route.js";
import { orgResponse } from "../schemas/admin.js";
import { orgIdParam } from "../schemas/params.js";
import { publicOrg } from "./admin/orgs.post.js";
import { ownOrgId } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "reads">;

/** GET /v1/orgs/{orgId}: the key's own org (`me` or its id); free. What a secret key finds out about itself. */
export function orgGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId",
    auth: { kind: "secret" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "The key's own org",
      description:
        "The org of the secret key calling: id, name, plan, subscription status and creation time. `GET /v1/orgs/me` finds it without knowing its id; every route under `/v1/orgs/{orgId}/` takes `me` too. Another org's id answers 404 NOT_FOUND, as a missing one does.",
      tag: "usage",
      response: orgResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "me" },
        response: { id: "org_3kT9xQ2mLbVfZ8aW", name: "Acme Shop", plan: "pro", subscription_status: "active", created_at: "2026-11-20T22:15:00.000Z" },
      },
    },
    async handle({ params, principal }) {
      const orgId = ownOrgId(principal!, params.orgId);
      const org = await deps.reads.get("orgs", orgId);
      if (!org) throw new ApiError("NOT_FOUND", `No org with id ${params.orgId}.`);
      return { data: publicOrg(org), credits: 0 };
    },
  });
}
