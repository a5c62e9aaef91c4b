import { decide } from "../../scoring/check.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { contentBody } from "../schemas/content.js";

/**
 * POST /v1/content {text} (2 credits): the content model on its own. `score` is the calibrated
 * spam probability; `decision` by the usual thresholds. See docs/api.md, "POST /v1/content".
 */
export function contentPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/content",
    auth: { kind: "secret" },
    body: contentBody,
    minCredits: 2,
    async handle({ body }) {
      const a = await deps.content.analyze(body.text);
      const score = Math.round(a.spam_probability * 10_000) / 10_000;
      return {
        data: {
          score,
          decision: decide(score),
          spam_probability: score,
          language: a.language,
          flags: a.flags,
          categories: { spam: score, fraud: round(a.fraud), cold_email: round(a.cold_email) },
          model_version: deps.content.version,
        },
        credits: 2,
      };
    },
  });
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
