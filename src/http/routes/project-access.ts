import type { ProjectRecord } from "../../store/messages.js";
import type { KeyPrincipal } from "../auth.js";
import { ApiError } from "../errors.js";
import type { ProjectDirectory } from "../projects.js";

/**
 * The project a secret key's org owns.
 * @throws ApiError NOT_FOUND when there is no such project, FORBIDDEN when another org owns it.
 */
export function ownedProject(projects: ProjectDirectory, principal: KeyPrincipal, projectId: string): ProjectRecord {
  const project = projects.get(projectId);
  if (!project) throw new ApiError("NOT_FOUND", `No project with id ${projectId}.`);
  if (project.org_id !== principal.orgId) throw new ApiError("FORBIDDEN", "This key belongs to another org.");
  return project;
}
