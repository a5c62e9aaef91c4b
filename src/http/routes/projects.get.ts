import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { adminListQuery, projectListResponse } from "../schemas/admin.js";
import { orgPageOf, publicProject, synced } from "./admin/lists.get.js";

/** The services this route uses: a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "reads" | "store">;

/** GET /v1/projects?limit=&cursor=: the projects of the key's own org, in id order; free. */
export function projectsGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects",
    auth: { kind: "secret" },
    query: adminListQuery,
    docs: {
      summary: "The key's org's projects",
      description:
        "The projects of the secret key's org with their allowed origins, in id order, `limit` per page (default 50, at most 100); pass `next_cursor` as `cursor` for the next page (null at the end). An org has at most FS_MAX_PROJECTS_PER_ORG projects (1000 by default).",
      tag: "usage",
      response: projectListResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_READY"],
      example: {
        response: { items: [{ id: "prj_8Hq2LmT7aZ3kXw9B", org_id: "org_3kT9xQ2mLbVfZ8aW", name: "Storefront", created_at: "2026-11-20T22:16:00.000Z", allowed_origins: ["https://shop.example.com"] }], next_cursor: null },
      },
    },
    async handle({ query, principal }) {
      const orgId = principal!.orgId;
      await synced(deps);
      return { data: await orgPageOf(deps, "projects", orgId, query, publicProject), credits: 0 };
    },
  });
}
