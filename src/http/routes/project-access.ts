import type { ProjectRecord } from "../../store/records.js";
import type { KeyPrincipal } from "../../front/auth.js";
import { withStore } from "../../store/store-wait.js";
import { ApiError } from "../../shared/errors.js";
import type { ProjectDirectory } from "../../front/projects.js";

/**
 * The project a secret key's org owns.
 * @throws ApiError NOT_FOUND when there is no such project or another org owns it: the two answer
 *   alike, so project ids of other orgs cannot be probed.
 */
export async function ownedProject(projects: ProjectDirectory, principal: KeyPrincipal, projectId: string): Promise<ProjectRecord> {
  // Cached, or read over the front's pool on a cluster node (off the event loop).
  const project = await withStore(() => projects.get(projectId));
  if (!project || project.org_id !== principal.orgId) throw new ApiError("NOT_FOUND", `No project with id ${projectId}.`);
  return project;
}

/**
 * The org id of a path, when it is the key's own org; `me` names the key's own org.
 * @throws ApiError NOT_FOUND for any other id, existing or not (org ids of others cannot be probed).
 */
export function ownOrgId(principal: KeyPrincipal, orgId: string): string {
  if (orgId === "me") return principal.orgId;
  if (orgId !== principal.orgId) throw new ApiError("NOT_FOUND", `No org with id ${orgId}.`);
  return orgId;
}
