import { newId } from "../../../shared/ids.js";
import type { OrgRecord } from "../../../store/messages.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { createOrgBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";

/** POST /v1/admin/orgs {name, plan?} -> {id, name, plan} */
export function adminOrgsPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs",
    auth: { kind: "admin" },
    body: createOrgBody,
    async handle({ body }) {
      const org: OrgRecord = {
        id: newId("org"),
        name: body.name,
        plan: body.plan,
        subscription_status: "active",
        trial_end: null,
        created_at: new Date().toISOString(),
      };
      ackOrThrow(await deps.store.send({ op: "org.create", org }));
      return { status: 201, data: publicOrg(org) };
    },
  });
}

/** The org fields an operator sees. */
export function publicOrg(org: OrgRecord) {
  return { id: org.id, name: org.name, plan: org.plan, subscription_status: org.subscription_status, created_at: org.created_at };
}
