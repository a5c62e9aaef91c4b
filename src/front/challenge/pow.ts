/**
 * Proof-of-work challenges in the ALTCHA format (PoW v2 of altcha-lib, which the `altcha` widget
 * v3 solves): issuing a signed challenge bound to a project, and checking a solved token. No I/O
 * and no clocks of its own: the caller passes `nowMs`. Recording a token as spent is the
 * service's job (service.ts); every cryptographic step is altcha-lib's.
 */
import { createChallenge, randomInt, verifySolution, type Challenge, type Payload } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";

/** Why a token is not valid. `null` in a verdict means it is. */
export type ChallengeReason = "malformed" | "bad_signature" | "expired" | "wrong_project" | "already_used" | "wrong_solution";

/**
 * How hard a challenge is. The solver derives keys for counters 0, 1, 2, ... up to a secret
 * counter drawn from [counterMin, counterMax]; each derivation is `cost` rounds of SHA-256. So the
 * work is exactly (counter + 1) × cost hashes: bounded, with no unlucky tail.
 */
export interface ChallengeDifficulty {
  /** SHA-256 rounds per attempt (altcha `cost`). Positive integer. */
  cost: number;
  /** Range of the secret counter, inclusive; 0 <= counterMin <= counterMax < 2^32. */
  counterMin: number;
  counterMax: number;
  /** Seconds from issue until the challenge (solved or not) expires. Positive integer. */
  ttlSeconds: number;
}

/**
 * Defaults: 10 rounds × 5,000-25,000 attempts = 50k-250k SHA-256 (150k on average). Measured in
 * Node 20 with altcha-lib's own single-threaded solver: ~57k attempts/s, so 0.1-0.45 s; the
 * browser widget runs several workers, which puts a typical page at roughly 0.1-1 s.
 * 20 minutes to solve and submit a form.
 */
export const DEFAULT_DIFFICULTY: ChallengeDifficulty = Object.freeze({ cost: 10, counterMin: 5_000, counterMax: 25_000, ttlSeconds: 1_200 });

/** The only algorithm issued and accepted. */
export const CHALLENGE_ALGORITHM = "SHA-256";

/** Longest token accepted (a real one is about 700 characters). */
export const MAX_TOKEN_LENGTH = 4_096;

/**
 * The two HMAC secrets altcha-lib uses, derived from the install's one challenge secret: one signs
 * the challenge parameters, the other the derived key (verification then costs one HMAC instead
 * of re-deriving the key).
 */
export interface ChallengeSecrets {
  signature: string;
  key: string;
}

/** Splits the per-install secret (from the store's meta) into the two HMAC secrets. */
export function challengeSecrets(secret: string): ChallengeSecrets {
  if (typeof secret !== "string" || secret.length < 32) throw new Error("challenge secret: expected at least 32 characters");
  return { signature: `${secret}:challenge`, key: `${secret}:key` };
}

/** Checks difficulty options at construction (bugs in configuration, not user input). */
export function assertDifficulty(d: ChallengeDifficulty): void {
  const int = (n: number, min: number, max: number): boolean => Number.isInteger(n) && n >= min && n <= max;
  if (!int(d.cost, 1, 1_000_000)) throw new Error(`challenge difficulty: cost must be an integer 1-1000000, got ${d.cost}`);
  if (!int(d.counterMin, 0, 0xffffffff) || !int(d.counterMax, d.counterMin, 0xffffffff)) {
    throw new Error(`challenge difficulty: need 0 <= counterMin (${d.counterMin}) <= counterMax (${d.counterMax}) < 2^32`);
  }
  if (!int(d.ttlSeconds, 1, 86_400)) throw new Error(`challenge difficulty: ttlSeconds must be an integer 1-86400, got ${d.ttlSeconds}`);
}

/** A challenge as handed to the browser, and its expiry (epoch ms). */
export interface IssuedChallenge {
  challenge: Challenge;
  expiresAt: number;
}

/**
 * Creates a signed challenge for one project. The project id and the expiry are signed
 * parameters (`data.project_id`, `expiresAt` in seconds), so a token cannot be moved to another
 * project or kept alive.
 * @example const { challenge } = await issueChallenge(secrets, "prj_1", Date.now(), DEFAULT_DIFFICULTY);
 */
export async function issueChallenge(secrets: ChallengeSecrets, projectId: string, nowMs: number, difficulty: ChallengeDifficulty): Promise<IssuedChallenge> {
  const expiresAtSeconds = Math.floor(nowMs / 1000) + difficulty.ttlSeconds;
  const counter = difficulty.counterMin === difficulty.counterMax ? difficulty.counterMin : randomInt(difficulty.counterMax, difficulty.counterMin);
  const challenge = await createChallenge({
    algorithm: CHALLENGE_ALGORITHM,
    cost: difficulty.cost,
    counter,
    deriveKey,
    data: { project_id: projectId },
    expiresAt: expiresAtSeconds,
    hmacSignatureSecret: secrets.signature,
    hmacKeySignatureSecret: secrets.key,
  });
  return { challenge, expiresAt: expiresAtSeconds * 1000 };
}

/** What a token proves before anyone asks whether it was used. */
export type TokenCheck =
  | {
      ok: true;
      /** Identifies the challenge for replay protection: its nonce (random, signed). */
      id: string;
      projectId: string;
      /** Epoch ms. */
      expiresAt: number;
    }
  | {
      ok: false;
      reason: Exclude<ChallengeReason, "wrong_project" | "already_used">;
      /** Known only once the signature checked out (otherwise it could be anything). */
      projectId: string | null;
      expiresAt: number | null;
    };

/**
 * Decodes the token the widget puts in its form field: base64 of the JSON
 * `{ challenge: { parameters, signature }, solution: { counter, derivedKey } }`.
 * Returns null when it is not that shape. The objects are returned as parsed, unknown fields
 * included, because the signature covers every parameter.
 */
export function decodeChallengeToken(token: string): Payload | null {
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(token)) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(token, "base64").toString("utf8"));
  } catch {
    return null;
  }
  if (!isObject(payload) || !isObject(payload.challenge) || !isObject(payload.solution)) return null;
  const { parameters, signature } = payload.challenge;
  if (!isObject(parameters) || (signature !== undefined && typeof signature !== "string")) return null;
  if (parameters.algorithm !== CHALLENGE_ALGORITHM) return null;
  for (const f of ["nonce", "salt", "keyPrefix"] as const) {
    if (typeof parameters[f] !== "string" || !/^[0-9a-f]{2,128}$/.test(parameters[f])) return null;
  }
  if (!Number.isInteger(parameters.cost) || (parameters.cost as number) < 1 || (parameters.cost as number) > 1_000_000) return null;
  if (parameters.keyLength !== undefined && parameters.keyLength !== 32) return null;
  if (parameters.expiresAt !== undefined && !(Number.isInteger(parameters.expiresAt) && (parameters.expiresAt as number) > 0)) return null;
  if (parameters.data !== undefined && !isObject(parameters.data)) return null;
  return payload as unknown as Payload;
}

/**
 * Checks a token's format, expiry, signature and solution, reasons in this order: malformed;
 * expired (altcha-lib's check on the real clock, which it makes before the signature's);
 * bad_signature; expired (against `nowMs`, the request clock); wrong_solution. Does not check
 * the project's owner or replays (service.ts).
 */
export async function checkChallengeToken(secrets: ChallengeSecrets, token: string, nowMs: number): Promise<TokenCheck> {
  const payload = decodeChallengeToken(token);
  if (!payload) return { ok: false, reason: "malformed", projectId: null, expiresAt: null };
  let result;
  try {
    result = await verifySolution({
      challenge: payload.challenge,
      solution: payload.solution,
      deriveKey,
      hmacSignatureSecret: secrets.signature,
      hmacKeySignatureSecret: secrets.key,
    });
  } catch {
    // altcha-lib throws on shapes its checks do not cover (a counter out of range while re-deriving).
    return { ok: false, reason: "malformed", projectId: null, expiresAt: null };
  }
  // altcha-lib checks expiry (on the real clock) before the signature.
  if (result.expired) return { ok: false, reason: "expired", projectId: null, expiresAt: null };
  if (result.invalidSignature) return { ok: false, reason: "bad_signature", projectId: null, expiresAt: null };
  // The parameters are ours from here on. A signed challenge without a project or an expiry was
  // not issued by issueChallenge: refuse it.
  const params = payload.challenge.parameters;
  const signed = signedFields(params);
  if (!signed) return { ok: false, reason: "malformed", projectId: null, expiresAt: null };
  if (nowMs >= signed.expiresAt) return { ok: false, reason: "expired", ...signed };
  if (!result.verified || result.invalidSolution) return { ok: false, reason: "wrong_solution", ...signed };
  return { ok: true, id: params.nonce, ...signed };
}

/** The project id and expiry (epoch ms) of a challenge we signed; null if either is missing. */
function signedFields(params: Challenge["parameters"]): { projectId: string; expiresAt: number } | null {
  const projectId = params.data?.project_id;
  if (typeof projectId !== "string" || projectId === "" || params.expiresAt === undefined) return null;
  return { projectId, expiresAt: params.expiresAt * 1000 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
