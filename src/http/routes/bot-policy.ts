import { resolvePolicy } from "../../scoring/bot-policy.js";
import type { ProjectRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { defineRoute, type RouteExample } from "../route.js";
import { botPolicyResponse, putBotPolicyBody } from "../schemas/bot-policy.js";
import { projectIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { ownedProject } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "peers" | "store">;

/** The answer of both routes: the effective policy (defaults filled in) and what was stored. */
function policyView(project: ProjectRecord) {
  return {
    project_id: project.id,
    policy: resolvePolicy(project.bot_policy ?? null),
    stored: project.bot_policy ?? null,
    updated_at: project.bot_policy_updated_at ?? null,
  };
}

/** GET /v1/projects/{projectId}/bot-policy (secret key of the owning org; free). */
export function botPolicyGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects/:projectId/bot-policy",
    auth: { kind: "secret" },
    params: { projectId: projectIdParam },
    docs: {
      summary: "Get a project's bot policy",
      description: "The project's effective bot policy (its stored document merged over the defaults) and the document as stored. A project of another org answers 404 NOT_FOUND, as a missing one does.",
      tag: "projects",
      response: botPolicyResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { projectId: POLICY_EXAMPLE.params!.projectId! }, response: POLICY_EXAMPLE.response },
    },
    async handle({ principal, params }) {
      return { data: policyView(await ownedProject(deps.beacon.projects, principal!, params.projectId)), credits: 0 };
    },
  });
}

/**
 * PUT /v1/projects/{projectId}/bot-policy: replaces the project's policy document (fields left
 * out take the defaults). Applies to the next observation.
 */
export function botPolicyPut(deps: Deps) {
  return defineRoute({
    method: "put",
    pattern: "/v1/projects/:projectId/bot-policy",
    auth: { kind: "secret", live: true },
    body: putBotPolicyBody,
    params: { projectId: projectIdParam },
    docs: {
      summary: "Replace a project's bot policy",
      description: [
        "Replaces the project's policy document; fields left out take the defaults. Applies to the next observation.",
        "Rules, first that applies wins: `spoofed` (a bot whose claim failed verification), `bots[bot_id]`, then `kinds[kind]` (\"allow\" applies to verified bots, or to unverifiable ones with `allow_unverified`; \"score\" leaves the score's decision). A spoofed bot is never allowed.",
      ].join("\n\n"),
      tag: "projects",
      response: botPolicyResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: POLICY_EXAMPLE,
    },
    async handle({ principal, params, body }) {
      const project = await ownedProject(deps.beacon.projects, principal!, params.projectId);
      const ack = ackOrThrow(
        await deps.store.send({
          op: "project.update",
          orgId: project.org_id,
          projectId: project.id,
          patch: { bot_policy: body, bot_policy_updated_at: new Date().toISOString() },
        }),
      );
      deps.peers.project(ack.project);
      return { data: policyView(ack.project), credits: 0 };
    },
  });
}

/** One PUT and the answer both routes give afterwards. */
const POLICY_EXAMPLE: RouteExample = {
  params: { projectId: "prj_8Hq2LmT7aZ3kXw9B" },
  body: { bots: { gptbot: "block" }, kinds: { ai_search: "allow" } },
  response: {
    project_id: "prj_8Hq2LmT7aZ3kXw9B",
    policy: {
      bots: { gptbot: "block" },
      kinds: { search_crawler: "allow", ai_crawler: "score", ai_search: "allow", ai_assistant: "score", monitor: "score", preview: "score", automation: "score" },
      spoofed: "block",
      allow_unverified: false,
      dry_run: [],
    },
    stored: { bots: { gptbot: "block" }, kinds: { ai_search: "allow" } },
    updated_at: "2026-11-20T22:15:00.000Z",
  },
};
