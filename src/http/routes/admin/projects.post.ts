import { newId } from "../../../shared/ids.js";
import type { ProjectRecord } from "../../../store/messages.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { createProjectBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";

/** POST /v1/admin/orgs/{orgId}/projects {name} -> {id, name} */
export function adminProjectsPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/projects",
    auth: { kind: "admin" },
    body: createProjectBody,
    async handle({ body, snap }) {
      const project: ProjectRecord = { id: newId("prj"), org_id: snap.params[0]!, name: body.name, created_at: new Date().toISOString() };
      ackOrThrow(await deps.store.send({ op: "project.create", project }));
      return { status: 201, data: { id: project.id, name: project.name, org_id: project.org_id } };
    },
  });
}
