import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { patchProjectBody, projectPatchResponse } from "../../schemas/admin.js";
import { orgIdParam, projectIdParam } from "../../schemas/params.js";
import { ackOrThrow } from "../ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "store">;

/**
 * PATCH /v1/admin/orgs/{orgId}/projects/{projectId} {allowed_origins}: which page origins may
 * use the project's publishable keys (an empty list: any). Applies to the next beacon call.
 */
export function adminProjectPatch(deps: Deps) {
  return defineRoute({
    method: "patch",
    pattern: "/v1/admin/orgs/:orgId/projects/:projectId",
    auth: { kind: "admin" },
    body: patchProjectBody,
    params: { orgId: orgIdParam, projectId: projectIdParam },
    docs: {
      summary: "Set a project's allowed origins",
      description: "Which page origins may use the project's publishable keys (`https://shop.example.com`, `https://*.example.com`, or `*`); an empty list allows any. Applies to the next beacon call.",
      tag: "admin",
      response: projectPatchResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW", projectId: "prj_8Hq2LmT7aZ3kXw9B" },
        body: { allowed_origins: ["https://shop.example.com", "https://*.example.com"] },
        response: { id: "prj_8Hq2LmT7aZ3kXw9B", org_id: "org_3kT9xQ2mLbVfZ8aW", name: "shop.example.com", allowed_origins: ["https://shop.example.com", "https://*.example.com"] },
      },
    },
    async handle({ body, params }) {
      const { orgId, projectId } = params;
      const ack = ackOrThrow(await deps.store.send({ op: "project.update", orgId, projectId, patch: { allowed_origins: body.allowed_origins } }));
      const p = ack.project;
      deps.peers.project(p);
      return { data: { id: p.id, org_id: p.org_id, name: p.name, allowed_origins: p.allowed_origins ?? [] } };
    },
  });
}
