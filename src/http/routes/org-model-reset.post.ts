import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { orgModelResetResponse } from "../schemas/feedback.js";
import { orgIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { feedbackCounts } from "./feedback.post.js";
import { ownOrgId } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "learning" | "peers" | "store">;

/**
 * POST /v1/orgs/{orgId}/model/reset (live secret key of that org; free): forgets the org's own
 * model, so that its checks are scored as a fresh org's (issue 39 finding 4). Durable: the writer
 * deletes the model in one commit before the answer. See docs/api.md, "POST /v1/orgs/{orgId}/model/reset".
 */
export function orgModelResetPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/orgs/:orgId/model/reset",
    // Live traffic is scored with the model: a test key cannot reset it (front/capabilities.ts).
    auth: { kind: "secret", live: true },
    params: { orgId: orgIdParam },
    docs: {
      summary: "Reset the org's own model",
      description: [
        "Forgets everything the org's feedback taught its own model: the model is deleted, `model_version` and the feedback figures start again from 0, and the org's next checks are scored by the global model alone, as a fresh org's. Labels given before the reset no longer count: the same label for the same check or content is learned anew (`outcome: recorded`). The check history setting and the kept checks stay (their labels still show in the listing).",
        "Needs a live secret key of the org (a test key answers 403 INSUFFICIENT_SCOPE); another org's id answers 404 NOT_FOUND. A reset of a model already reset changes nothing but `reset_at`; with an `Idempotency-Key`, a retry gets the first answer.",
      ].join("\n\n"),
      tag: "scoring",
      response: orgModelResetResponse,
      credits: [0],
      errors: ["NOT_FOUND", "INSUFFICIENT_SCOPE", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        response: { model_version: 0, feedback: { spam: 0, ham: 0, relabelled: 0, repeated: 0 }, reset_at: "2026-11-20T22:20:00.000Z" },
      },
    },
    async handle({ principal, params, nowMs }) {
      const orgId = ownOrgId(principal!, params.orgId);
      const { learning } = ackOrThrow(await deps.store.send({ op: "model.reset", orgId, nowMs }));
      deps.learning.take(learning, null);
      deps.peers.learning(orgId);
      return { data: { model_version: 0 as const, feedback: feedbackCounts(learning), reset_at: learning.model_reset_at! }, credits: 0 };
    },
  });
}

/** POST /v1/admin/orgs/{orgId}/model/reset (admin token): the same reset, for an operator (npm run admin -- orgs model-reset). */
export function adminOrgModelResetPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/model/reset",
    auth: { kind: "admin" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "Reset an org's own model",
      description:
        "As `POST /v1/orgs/{orgId}/model/reset`, for any org, with the admin token: the org's live model is forgotten and its checks are scored as a fresh org's. An unknown org answers 404 NOT_FOUND.",
      tag: "admin",
      response: orgModelResetResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        response: { model_version: 0, feedback: { spam: 0, ham: 0, relabelled: 0, repeated: 0 }, reset_at: "2026-11-20T22:20:00.000Z" },
      },
    },
    async handle({ params, nowMs }) {
      const { learning } = ackOrThrow(await deps.store.send({ op: "model.reset", orgId: params.orgId, nowMs }));
      deps.learning.take(learning, null);
      deps.peers.learning(params.orgId);
      return { data: { model_version: 0 as const, feedback: feedbackCounts(learning), reset_at: learning.model_reset_at! } };
    },
  });
}
