import type { Challenge } from "altcha-lib";
import type { ProjectRecord } from "../../store/records.js";
import { withStore } from "../../store/store-wait.js";
import {
  DEFAULT_DIFFICULTY,
  assertDifficulty,
  challengeSecrets,
  checkChallengeToken,
  issueChallenge,
  type ChallengeDifficulty,
  type ChallengeReason,
} from "./pow.js";

/**
 * Records a challenge as used, once. Resolves true for the first spend of `id` and false for
 * every later one, also across restarts; rejects (throws) when that cannot be recorded, because
 * a token that cannot be marked used must not be accepted. `expiresAt` is epoch ms.
 */
export type SpendChallenge = (id: string, expiresAt: number) => Promise<boolean>;

/** The answer of a verification: `data` of POST /v1/challenge/verify. */
export interface ChallengeVerdict {
  valid: boolean;
  reason: ChallengeReason | null;
  /** The challenge's project, once its signature checked out; null otherwise. */
  project_id: string | null;
  /** Epoch ms at which the challenge expires(d), once its signature checked out; null otherwise. */
  expires_at: number | null;
}

/** Issues and verifies the proof-of-work challenges of one install. */
export interface ChallengeService {
  /** The difficulty every challenge is issued with. */
  readonly difficulty: ChallengeDifficulty;
  /** A new signed challenge for a project and its expiry (epoch ms). */
  issue(projectId: string, nowMs: number): Promise<{ challenge: Challenge; expiresAt: number }>;
  /**
   * Verifies a solved token for a caller of org `orgId` and, when valid, spends it: a second
   * verification of the same token answers `already_used`. See verifyChallengeToken.
   */
  verify(orgId: string, token: string, nowMs: number): Promise<ChallengeVerdict>;
}

export interface ChallengeServiceOptions {
  /** The per-install secret (at least 32 characters), kept in the store's meta (ensureChallengeSecret). */
  secret: string;
  /** Looks up a project by id (ProjectDirectory in the service). */
  projects: { get(id: string): ProjectRecord | undefined };
  /** Records spends through the single writer (storeSpender). */
  spend: SpendChallenge;
  /** Defaults to DEFAULT_DIFFICULTY. */
  difficulty?: ChallengeDifficulty;
}

/**
 * Builds the challenge service; checks its options at once.
 * @example const challenges = createChallengeService({ secret, projects: beacon.projects, spend: storeSpender(store) });
 */
export function createChallengeService(options: ChallengeServiceOptions): ChallengeService {
  const secrets = challengeSecrets(options.secret);
  const difficulty = Object.freeze({ ...(options.difficulty ?? DEFAULT_DIFFICULTY) });
  assertDifficulty(difficulty);
  const { projects, spend } = options;
  return {
    difficulty,
    issue: (projectId, nowMs) => issueChallenge(secrets, projectId, nowMs, difficulty),
    async verify(orgId, token, nowMs) {
      const check = await checkChallengeToken(secrets, token, nowMs);
      if (!check.ok) return verdict(check.reason, check.projectId, check.expiresAt);
      const project = await withStore(() => projects.get(check.projectId));
      if (!project || project.org_id !== orgId) return verdict("wrong_project", check.projectId, check.expiresAt);
      // Last, so that only a token that would otherwise be accepted is used up.
      const first = await spend(check.id, check.expiresAt);
      return verdict(first ? null : "already_used", check.projectId, check.expiresAt);
    },
  };
}

/**
 * Verifies a solved challenge token for org `orgId` and spends it when valid: the one path for
 * POST /v1/challenge/verify and `metadata.captcha_token` of POST /v1/check.
 *
 * Order of reasons: malformed, expired, bad_signature, expired, wrong_solution (token checks,
 * see checkChallengeToken), then wrong_project (the project is not the caller's org's), then
 * already_used (spent before: exactly one of any number of concurrent verifications of a token
 * is valid). A failed verification is an answer, not an error.
 * @throws ApiError NOT_READY when the spend cannot be recorded (writer down); nothing is accepted then.
 * @example const v = await verifyChallengeToken(challenges, principal.orgId, body.token, nowMs);
 */
export function verifyChallengeToken(service: ChallengeService, orgId: string, token: string, nowMs: number): Promise<ChallengeVerdict> {
  return service.verify(orgId, token, nowMs);
}

function verdict(reason: ChallengeReason | null, projectId: string | null, expiresAt: number | null): ChallengeVerdict {
  return { valid: reason === null, reason, project_id: projectId, expires_at: expiresAt };
}
