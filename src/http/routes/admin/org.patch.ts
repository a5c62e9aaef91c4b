import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgResponse, patchOrgBody } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";
import { ackOrThrow } from "../ack.js";
import { publicOrg } from "./orgs.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "store">;

/** PATCH /v1/admin/orgs/{orgId} {plan?, name?}: a plan change applies to the very next call. */
export function adminOrgPatch(deps: Deps) {
  return defineRoute({
    method: "patch",
    pattern: "/v1/admin/orgs/:orgId",
    auth: { kind: "admin" },
    body: patchOrgBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Change an org",
      description: "Changes an org's plan or name; a plan change applies to the very next call.",
      tag: "admin",
      response: orgResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { orgId: "org_3kT9xQ2mLbVfZ8aW" }, body: { plan: "business" }, response: { ...{ id: "org_3kT9xQ2mLbVfZ8aW", name: "Acme Shop", plan: "pro", subscription_status: "active", created_at: "2026-11-20T22:15:00.000Z" }, plan: "business" } },
    },
    async handle({ body, params }) {
      const orgId = params.orgId;
      const ack = ackOrThrow(await deps.store.send({ op: "org.update", orgId, patch: body }));
      deps.peers.plan(orgId, ack.org.plan);
      return { data: publicOrg(ack.org) };
    },
  });
}
