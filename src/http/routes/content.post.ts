import { decide } from "../../scoring/check.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { contentBody, contentResponse } from "../schemas/content.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "content">;

/**
 * POST /v1/content {text} (2 credits): the content model on its own. `score` is the calibrated
 * spam probability; `decision` by the usual thresholds. See docs/api.md, "POST /v1/content".
 */
export function contentPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/content",
    auth: { kind: "secret" },
    body: contentBody,
    minCredits: 2,
    docs: {
      summary: "Score a text",
      description: "The content model on its own: the calibrated spam probability of a text (also `score`), its language, the flags it raises, and cold-email and fraud scores. Runs on the scoring pool: 503 OVERLOADED when its queue is full.",
      tag: "scoring",
      response: contentResponse,
      credits: [2],
      errors: ["OVERLOADED"],
      example: {
        body: { text: "Limited time offer!!! Claim your prize now at bit.ly/win-big" },
        response: {
          score: 0.9731,
          decision: "block",
          spam_probability: 0.9731,
          language: "en",
          flags: ["links", "url_shortener", "prize", "urgency"],
          categories: { spam: 0.9731, fraud: 0.6422, cold_email: 0.1835 },
          model_version: "content-2.0748b140a864",
        },
      },
    },
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
