import { resolvePolicy } from "../../scoring/bot-policy.js";
import type { ProjectRecord } from "../../store/messages.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { putBotPolicyBody } from "../schemas/bot-policy.js";
import { ackOrThrow } from "./ack.js";
import { ownedProject } from "./project-access.js";

/** The answer of both routes: the effective policy (defaults filled in) and what was stored. */
function policyView(project: ProjectRecord) {
  return {
    project_id: project.id,
    policy: resolvePolicy((project.bot_policy ?? null) as Parameters<typeof resolvePolicy>[0]),
    stored: project.bot_policy ?? null,
    updated_at: project.bot_policy_updated_at ?? null,
  };
}

/** GET /v1/projects/{projectId}/bot-policy (secret key of the owning org; free). */
export function botPolicyGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects/:projectId/bot-policy",
    auth: { kind: "secret" },
    handle({ principal, snap }) {
      return { data: policyView(ownedProject(deps.beacon.projects, principal!, snap.params[0]!)), credits: 0 };
    },
  });
}

/**
 * PUT /v1/projects/{projectId}/bot-policy: replaces the project's policy document (fields left
 * out take the defaults). Applies to the next observation.
 */
export function botPolicyPut(deps: AppDeps) {
  return defineRoute({
    method: "put",
    pattern: "/v1/projects/:projectId/bot-policy",
    auth: { kind: "secret" },
    body: putBotPolicyBody,
    async handle({ principal, snap, body }) {
      const project = ownedProject(deps.beacon.projects, principal!, snap.params[0]!);
      const ack = ackOrThrow(
        await deps.store.send({
          op: "project.update",
          orgId: project.org_id,
          projectId: project.id,
          patch: { bot_policy: body as Record<string, unknown>, bot_policy_updated_at: new Date().toISOString() },
        }),
      );
      deps.beacon.projects.remember(ack.project!);
      return { data: policyView(ack.project!), credits: 0 };
    },
  });
}
