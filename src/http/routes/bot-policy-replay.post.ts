import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { replayBody, replayResponse } from "../schemas/bot-policy.js";
import { projectIdParam } from "../schemas/params.js";
import { syncChecks } from "./checks.get.js";
import { syncObservations } from "./observations.get.js";
import { ownedProject } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "config" | "flushLedger" | "flushObservations" | "reads" | "scans" | "store">;

const DAY_MS = 24 * 3600 * 1000;

/**
 * POST /v1/projects/{projectId}/bot-policy/replay (secret key of the owning org; free): what a
 * proposed policy, or proposed check thresholds, would have changed over the stored hits and
 * checks of the last `days` days, re-decided on the scan thread (front/traffic/scan-thread.ts). Changes
 * nothing. One report or replay at a time per org.
 */
export function botPolicyReplayPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/projects/:projectId/bot-policy/replay",
    auth: { kind: "secret" },
    body: replayBody,
    params: { projectId: projectIdParam },
    docs: {
      summary: "Replay a proposed bot policy or check thresholds",
      description: [
        "Re-decides the project's stored hits of the last `days` days under a proposed bot policy (the document PUT bot-policy takes), and the org's stored checks with proposed thresholds, with the same functions that decide live hits and checks; saves nothing.",
        `Answers how many were re-decided and how many would change, by old and new decision, by kind and by reason (hits) or by form (checks), with up to \`examples\` examples in each group. At most FS_REPLAY_SCAN_LIMIT hits and FS_REPLAY_SCAN_LIMIT checks (20,000 by default) are re-decided, newest first; \`partial\` says the cap cut the period short (the figures then cover the newest ones only). Checks are kept only as the org's check history setting says.`,
        "One policy replay or traffic report runs at a time per org (per front thread): another one meanwhile answers 429 RATE_LIMITED with Retry-After (1 s), before anything is read.",
      ].join("\n\n"),
      tag: "projects",
      response: replayResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "RATE_LIMITED", "NOT_READY"],
      example: EXAMPLE,
    },
    async handle({ principal, params, body, nowMs }) {
      // One report or replay at a time per org, refused before anything is read.
      const done = deps.scans.enter(principal!.orgId);
      try {
        const project = await ownedProject(deps.beacon.projects, principal!, params.projectId);
        const since = nowMs - body.days * DAY_MS;
        // Every hit and check answered so far reaches the store first.
        if (body.policy) await syncObservations(deps);
        if (body.thresholds) await syncChecks(deps);
        const r = await deps.scans.run({
          kind: "replay",
          projectId: project.id,
          orgId: project.org_id,
          since,
          examples: body.examples,
          limit: deps.config.FS_REPLAY_SCAN_LIMIT,
          policy: body.policy ?? null,
          thresholds: body.thresholds ?? null,
        });
        return { data: { project_id: project.id, days: body.days, since: new Date(since).toISOString(), hits: r.hits, checks: r.checks }, credits: 0 };
      } finally {
        done();
      }
    },
  });
}

const EXAMPLE = {
  params: { projectId: "prj_8Hq2LmT7aZ3kXw9B" },
  body: { policy: { kinds: { ai_crawler: "block" } }, thresholds: { review: 0.5, block: 0.8 }, days: 7, examples: 1 },
  response: {
    project_id: "prj_8Hq2LmT7aZ3kXw9B",
    days: 7,
    since: "2026-11-13T22:15:00.000Z",
    hits: {
      scanned: 1840,
      changed: 212,
      partial: false,
      transitions: [{ from: "review", to: "block", count: 212 }],
      by_kind: [{ kind: "ai_crawler", count: 212, examples: [hitEx()] }],
      by_reason: [{ reason: "kinds.ai_crawler", count: 212, examples: [hitEx()] }],
    },
    checks: {
      scanned: 930,
      changed: 41,
      partial: false,
      transitions: [{ from: "review", to: "allow", count: 41 }],
      by_form: [{ form_id: "contact", count: 41, examples: [{ request_id: "req_3kT9xQ2mLbVf", created_at: "2026-11-20T22:20:00.000Z", form_id: "contact", score: 0.4712, from: "review", to: "allow" }] }],
    },
  },
};

function hitEx() {
  return { id: "obs_Xk3Lm9Qa2b1f", created_at: "2026-11-20T22:20:00.000Z", page: "/blog/launch", bot_id: "gptbot", bot_kind: "ai_crawler", score: 0.7311, from: "review", to: "block", rule: "kinds.ai_crawler" };
}
