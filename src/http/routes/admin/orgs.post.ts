import { newId } from "../../../shared/ids.js";
import type { OrgRecord } from "../../../store/records.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { createOrgBody, orgResponse } from "../../schemas/admin.js";
import { ackOrThrow, COMMITTED } from "../ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "store">;

/** POST /v1/admin/orgs {name, plan?} -> {id, name, plan} */
export function adminOrgsPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs",
    auth: { kind: "admin" },
    body: createOrgBody,
    docs: {
      summary: "Create an org",
      description: "A new org on a plan (default free). Give it keys with POST /v1/admin/orgs/{orgId}/keys.",
      tag: "admin",
      status: 201,
      response: orgResponse,
      errors: ["NOT_READY"],
      example: { body: { name: "Acme Shop", plan: "pro" }, response: { id: "org_3kT9xQ2mLbVfZ8aW", name: "Acme Shop", plan: "pro", subscription_status: "active", created_at: "2026-11-20T22:15:00.000Z" } },
    },
    async handle({ body, recordAnswer }) {
      const org: OrgRecord = {
        id: newId("org"),
        name: body.name,
        plan: body.plan,
        subscription_status: "active",
        trial_end: null,
        created_at: new Date().toISOString(),
      };
      const data = publicOrg(org);
      const answer = recordAnswer?.(201, data);
      ackOrThrow(await deps.store.send({ op: "org.create", org, answer }));
      return { status: 201, data, recorded: answer && COMMITTED };
    },
  });
}

/** The org fields an operator sees. */
export function publicOrg(org: OrgRecord) {
  return { id: org.id, name: org.name, plan: org.plan, subscription_status: org.subscription_status, created_at: org.created_at };
}
