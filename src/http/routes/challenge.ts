import type { ChallengeService } from "../../challenge/service.js";
import type { AppDeps } from "../deps.js";
import { beaconProject } from "../beacon/hits.js";
import { defineRoute } from "../route.js";
import { challengeVerifyBody } from "../schemas/challenge.js";

/** Challenge verification costs 1 credit; issuing is free, like the beacon calls. */
const VERIFY_CREDITS = 1;

/**
 * GET /v1/challenge -> {challenge, expires_at, difficulty}: a new proof-of-work challenge for the
 * publishable key's project, in the ALTCHA format (`challenge` = `{parameters, signature}`).
 * Publishable key, 0 credits, never refused for quota, CORS and allowed_origins as for the
 * beacon. Nothing is stored: the challenge is signed, and only its spend is recorded.
 */
export function challengeGet(deps: AppDeps, challenges: ChallengeService) {
  return defineRoute({
    method: "get",
    pattern: "/v1/challenge",
    auth: { kind: "publishable" },
    beacon: true,
    async handle({ principal, snap, nowMs }) {
      const project = beaconProject(deps.beacon, principal!, snap.origin);
      const { challenge, expiresAt } = await challenges.issue(project.id, nowMs);
      const { cost, counterMax } = challenges.difficulty;
      return {
        data: { challenge, expires_at: expiresAt, difficulty: { algorithm: challenge.parameters.algorithm, cost, max_counter: counterMax } },
        credits: 0,
        neverBlock: true,
        // Each challenge is single-use: no cache may hand one to two visitors.
        headers: { "cache-control": "no-store" },
      };
    },
  });
}

/**
 * POST /v1/challenge/verify {token} -> {valid, reason, project_id, expires_at}: checks a solved
 * token (signature, solution, expiry, project of the caller's org) and spends it, so a replay is
 * `already_used`. Secret key, 1 credit whether or not the token is valid.
 */
export function challengeVerifyPost(_deps: AppDeps, challenges: ChallengeService) {
  return defineRoute({
    method: "post",
    pattern: "/v1/challenge/verify",
    auth: { kind: "secret" },
    minCredits: VERIFY_CREDITS,
    body: challengeVerifyBody,
    async handle({ principal, body, nowMs }) {
      const verdict = await challenges.verify(principal!.orgId, body.token, nowMs);
      return { data: verdict, credits: VERIFY_CREDITS };
    },
  });
}
