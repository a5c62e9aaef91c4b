import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { patchProjectBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";

/**
 * PATCH /v1/admin/orgs/{orgId}/projects/{projectId} {allowed_origins}: which page origins may
 * use the project's publishable keys (an empty list: any). Applies to the next beacon call.
 */
export function adminProjectPatch(deps: AppDeps) {
  return defineRoute({
    method: "patch",
    pattern: "/v1/admin/orgs/:orgId/projects/:projectId",
    auth: { kind: "admin" },
    body: patchProjectBody,
    async handle({ body, snap }) {
      const [orgId, projectId] = snap.params as [string, string];
      const ack = ackOrThrow(await deps.store.send({ op: "project.update", orgId, projectId, patch: { allowed_origins: body.allowed_origins } }));
      const p = ack.project!;
      deps.beacon.projects.remember(p);
      return { data: { id: p.id, org_id: p.org_id, name: p.name, allowed_origins: p.allowed_origins ?? [] } };
    },
  });
}
