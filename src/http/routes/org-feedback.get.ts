import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { defineRoute } from "../route.js";
import { orgFeedbackResponse } from "../schemas/feedback.js";
import { orgIdParam } from "../schemas/params.js";
import { historyView } from "./check-history.js";
import { feedbackCounts } from "./feedback.post.js";
import { emptyLearning } from "../../store/records.js";
import { ownOrgId } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "learning">;

/**
 * GET /v1/orgs/{orgId}/feedback (secret key of that org; free): the org's feedback figures and
 * how often its own model, and the global one, agreed with the labels before learning them.
 */
export function orgFeedbackGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId/feedback",
    auth: { kind: "secret" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "The org's feedback and its model's agreement",
      description: "How many labels the org's own model has learned (spam, ham, relabelled, repeated), its version, the check history setting, and per UTC day with feedback how many of that day's labels the org model and the global model agreed with before learning them (probability ≥ 0.5 for spam, below for ham). Another org's id answers 404 NOT_FOUND.",
      tag: "scoring",
      response: orgFeedbackResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        response: {
          model_version: 17,
          feedback: { spam: 9, ham: 8, relabelled: 0, repeated: 1 },
          history: { mode: "features", days: 30, default: true },
          agreement: [{ day: "2026-11-20", feedback: 17, org_model: 0.8235, global_model: 0.5882 }],
          updated_at: "2026-11-20T22:20:00.000Z",
        },
      },
    },
    async handle({ principal, params }) {
      const orgId = ownOrgId(principal!, params.orgId);
      // A test key's figures are its org's test scope's (what test feedback taught); the history setting is the org's.
      const scope = dataScope(principal!, orgId);
      const l = await deps.learning.get(scope);
      const setting = scope === orgId ? l : await deps.learning.get(orgId);
      const r = l.record ?? emptyLearning(orgId);
      const share = (k: number, n: number): number => Math.round((k / n) * 10_000) / 10_000;
      return {
        data: {
          model_version: r.model_version,
          feedback: feedbackCounts(r),
          history: historyView(setting.history, setting.record),
          agreement: r.agreement.map((d) => ({ day: d.day, feedback: d.n, org_model: share(d.org, d.n), global_model: share(d.global, d.n) })),
          updated_at: r.updated_at,
        },
        credits: 0,
      };
    },
  });
}
