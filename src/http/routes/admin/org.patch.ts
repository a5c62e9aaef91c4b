import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { patchOrgBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";
import { publicOrg } from "./orgs.post.js";

/** PATCH /v1/admin/orgs/{orgId} {plan?, name?}: a plan change applies to the very next call. */
export function adminOrgPatch(deps: AppDeps) {
  return defineRoute({
    method: "patch",
    pattern: "/v1/admin/orgs/:orgId",
    auth: { kind: "admin" },
    body: patchOrgBody,
    async handle({ body, snap }) {
      const orgId = snap.params[0]!;
      const ack = ackOrThrow(await deps.store.send({ op: "org.update", orgId, patch: body }));
      deps.quota.setPlan(orgId, ack.org!.plan);
      return { data: publicOrg(ack.org!) };
    },
  });
}
