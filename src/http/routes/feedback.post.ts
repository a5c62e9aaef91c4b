import { createHash } from "node:crypto";
import { formText } from "../../scoring/content/index.js";
import type { OrgLearningRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { ApiError } from "../../shared/errors.js";
import { defineRoute } from "../route.js";
import { feedbackBody, feedbackResponse } from "../schemas/feedback.js";
import { ackOrThrow } from "./ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "content" | "feedbackLimit" | "flushLedger" | "learning" | "peers" | "store">;

/**
 * POST /v1/feedback (secret key, free): a label, spam or ham, for a check of the org's history
 * (by its request id) or for content sent again in the shape of POST /v1/check. The org's own
 * model learns it before the answer (the writer commits both); a repeat counts once. See
 * docs/api.md, "POST /v1/feedback".
 */
export function feedbackPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/feedback",
    auth: { kind: "secret" },
    body: feedbackBody,
    admit: (_snap, principal, nowMs) => deps.feedbackLimit.admit(principal!.orgId, nowMs),
    docs: {
      summary: "Report a check's true label",
      description: [
        "Tells the service that an earlier check (`request_id`, its answer's `metadata.request_id`) or a submission sent again in the shape of `POST /v1/check` (`form_data`, as Akismet's submit-spam / submit-ham) was `spam` or `ham`. The org's own model learns it at once: the org's next checks of similar text score accordingly, and no other org's.",
        "Idempotent: the same label for the same check or content counts once (`outcome: repeated`); another label replaces it (`relabelled`). A request id that is unknown, another org's, not kept (the org's check history setting) or past its retention answers 404 NOT_FOUND, all alike. A check or content without text answers 422 MISSING_REQUIRED_DATA (the model learns from text). Feedback is limited per org (429 RATE_LIMITED with Retry-After). A test key's feedback names test checks and trains the org's test model only, never the live one.",
      ].join("\n\n"),
      tag: "scoring",
      response: feedbackResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "MISSING_REQUIRED_DATA", "RATE_LIMITED", "OVERLOADED", "NOT_READY"],
      example: {
        body: { label: "spam", request_id: "req_3kT9xQ2mLbVf" },
        response: { label: "spam", target: "request", request_id: "req_3kT9xQ2mLbVf", outcome: "recorded", model_version: 17, feedback: { spam: 9, ham: 8, relabelled: 0, repeated: 1 } },
      },
    },
    async handle({ principal, body, nowMs }) {
      // A test key's feedback is about its test checks and teaches its org's test scope's model,
      // never the live one (records.ts scopedId); the per-org limit counts both (admit).
      const orgId = dataScope(principal!, principal!.orgId);
      let target;
      if (body.request_id !== undefined) {
        // The check's history record rides on its debit, which may still wait on this thread for
        // the writer: send it first (messages to the writer keep their order).
        deps.flushLedger();
        target = { kind: "request" as const, requestId: body.request_id };
      } else {
        const text = formText(body.form_data ?? {}).text;
        if (text.length === 0) throw new ApiError("MISSING_REQUIRED_DATA", "form_data has no text to learn from (the fields POST /v1/check reads as text).");
        const { evidence } = await deps.content.analyzeWithEvidence(text);
        target = { kind: "content" as const, key: contentKey(evidence.features), evidence };
      }
      const ack = await deps.store.send({ op: "feedback.apply", orgId, label: body.label, target, nowMs });
      if (!ack.ok && ack.error === "CONFLICT") throw new ApiError("MISSING_REQUIRED_DATA", ack.message);
      const done = ackOrThrow(ack);
      deps.learning.take(done.learning, done.model);
      deps.peers.learning(orgId);
      return {
        data: {
          label: body.label,
          target: target.kind,
          request_id: body.request_id ?? null,
          outcome: done.outcome,
          model_version: done.learning.model_version,
          feedback: feedbackCounts(done.learning),
        },
        credits: 0,
      };
    },
  });
}

/** The feedback figures of an org's learning record, as answers show them. */
export function feedbackCounts(l: OrgLearningRecord): OrgLearningRecord["feedback"] {
  return { spam: l.feedback.spam, ham: l.feedback.ham, relabelled: l.feedback.relabelled, repeated: l.feedback.repeated };
}

/** The key of content sent again: the same text gives the same features, so a repeat counts once. */
function contentKey(features: string): string {
  return createHash("sha256").update(features).digest("base64url").slice(0, 32);
}
