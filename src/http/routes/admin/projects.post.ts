import { newId } from "../../../shared/ids.js";
import type { ProjectRecord } from "../../../store/records.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { createProjectBody, projectResponse } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";
import { ackOrThrow, COMMITTED } from "../ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "store">;

/** POST /v1/admin/orgs/{orgId}/projects {name} -> {id, name} */
export function adminProjectsPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/projects",
    auth: { kind: "admin" },
    body: createProjectBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Create a project",
      description:
        "A project (a site using the beacon) of an org; its publishable keys are bound to it. An org has at most FS_MAX_PROJECTS_PER_ORG projects (1000 by default): past it 409 LIMIT_EXCEEDED, and nothing is created.",
      tag: "admin",
      status: 201,
      response: projectResponse,
      errors: ["NOT_FOUND", "LIMIT_EXCEEDED", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        body: { name: "shop.example.com" },
        response: { id: "prj_8Hq2LmT7aZ3kXw9B", name: "shop.example.com", org_id: "org_3kT9xQ2mLbVfZ8aW" },
      },
    },
    async handle({ body, params, recordAnswer }) {
      const project: ProjectRecord = { id: newId("prj"), org_id: params.orgId, name: body.name, created_at: new Date().toISOString() };
      const data = { id: project.id, name: project.name, org_id: project.org_id };
      const answer = recordAnswer?.(201, data);
      ackOrThrow(await deps.store.send({ op: "project.create", project, answer }));
      return { status: 201, data, recorded: answer && COMMITTED };
    },
  });
}
