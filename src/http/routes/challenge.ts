import type { ChallengeService } from "../../front/challenge/service.js";
import type { AppDeps } from "../deps.js";
import { beaconProject } from "../../front/beacon/hits.js";
import { defineRoute } from "../route.js";
import { challengeResponse, challengeVerifyBody, challengeVerifyResponse } from "../schemas/challenge.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon">;

/** Challenge verification costs 1 credit; issuing is free, like the beacon calls. */
const VERIFY_CREDITS = 1;

/**
 * GET /v1/challenge -> {challenge, expires_at, difficulty}: a new proof-of-work challenge for the
 * publishable key's project, in the ALTCHA format (`challenge` = `{parameters, signature}`).
 * Publishable key, 0 credits, never refused for quota, CORS and allowed_origins as for the
 * beacon. Nothing is stored: the challenge is signed, and only its spend is recorded. Signing one
 * costs the front thread about half a millisecond and a publishable key is public, so each call
 * counts against the beacon's per-address and per-project limits (429 RATE_LIMITED).
 */
export function challengeGet(deps: Deps, challenges: ChallengeService) {
  return defineRoute({
    method: "get",
    pattern: "/v1/challenge",
    auth: { kind: "publishable" },
    beacon: true,
    // Without the writes' Origin requirement: a same-origin page fetches it without one.
    admit: (snap, principal, nowMs) => deps.beacon.limits.admit(beaconProject(deps.beacon, principal!, snap.origin).id, deps.beacon.trusted.clientIp(snap.peer, snap.forwardedFor), nowMs),
    docs: {
      summary: "Issue a proof-of-work challenge",
      description: "A new signed proof-of-work challenge in the ALTCHA format for the publishable key's project, for the widget to solve; its solution goes to POST /v1/challenge/verify. Nothing is stored, and no cache may keep it (Cache-Control: no-store). Never refused for quota; counts against the beacon's limits per client address and per project (429 RATE_LIMITED).",
      tag: "scoring",
      response: challengeResponse,
      credits: [0],
      errors: ["FORBIDDEN", "ORIGIN_NOT_ALLOWED", "RATE_LIMITED"],
      example: {
        response: {
          challenge: {
            parameters: {
              algorithm: "SHA-256",
              nonce: "5f1c9a0e7b2d4c68",
              salt: "a93e07c1d4b25f86",
              cost: 10,
              keyLength: 32,
              keyPrefix: "00",
              expiresAt: 1_763_678_400,
              data: { project_id: "prj_8Hq2LmT7aZ3kXw9B" },
            },
            signature: "2c6d0e9b4f1a7c35e8d2b6a94f0c1e7d3b5a8c2e6f9d1b4a7c0e3f6a9d2b5c8e",
          },
          expires_at: 1_763_678_400_000,
          difficulty: { algorithm: "SHA-256", cost: 10, max_counter: 25_000 },
        },
      },
    },
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
export function challengeVerifyPost(_deps: Deps, challenges: ChallengeService) {
  return defineRoute({
    method: "post",
    pattern: "/v1/challenge/verify",
    auth: { kind: "secret" },
    minCredits: VERIFY_CREDITS,
    body: challengeVerifyBody,
    docs: {
      summary: "Verify a solved challenge",
      description: "Checks a solved challenge token (signature, solution, expiry, and that its project belongs to the key's org) and spends it, so a second verification answers `already_used`. An invalid token is an answer (`valid: false` with the reason), not an error, and costs the same.",
      tag: "scoring",
      response: challengeVerifyResponse,
      credits: [VERIFY_CREDITS],
      errors: ["NOT_READY"],
      example: {
        body: { token: "eyJjaGFsbGVuZ2UiOnsicGFyYW1ldGVycyI6eyJhbGdvcml0aG0iOiJTSEEtMjU2In19fQ==" },
        response: { valid: true, reason: null, project_id: "prj_8Hq2LmT7aZ3kXw9B", expires_at: 1_763_678_400_000 },
      },
    },
    async handle({ principal, body, nowMs }) {
      const verdict = await challenges.verify(principal!.orgId, body.token, nowMs);
      return { data: verdict, credits: VERIFY_CREDITS };
    },
  });
}
