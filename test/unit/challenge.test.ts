import { solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_DIFFICULTY,
  challengeSecrets,
  checkChallengeToken,
  createChallengeService,
  decodeChallengeToken,
  issueChallenge,
  type ChallengeDifficulty,
} from "../../src/front/challenge/index.js";
import type { ProjectRecord } from "../../src/store/records.js";

const SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef";
const secrets = challengeSecrets(SECRET);
/** Cheap puzzles: the tests check the protocol, not the work. */
const EASY: ChallengeDifficulty = { cost: 1, counterMin: 50, counterMax: 200, ttlSeconds: 600 };
const NOW = Date.UTC(2030, 0, 1); // ahead of the real clock, like a test clock

/** Solves a challenge with altcha-lib's own solver and returns the widget's token (base64 JSON). */
async function solve(challenge: Challenge, tamper?: (payload: any) => void): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 10_000 });
  if (!solution) throw new Error("no solution");
  const payload: any = { challenge: structuredClone(challenge), solution };
  tamper?.(payload);
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

function project(id: string, orgId: string): ProjectRecord {
  return { id, org_id: orgId, name: id, created_at: "2030-01-01T00:00:00Z" };
}

describe("issueChallenge", () => {
  it("signs a SHA-256 challenge bound to the project, expiring after the ttl", async () => {
    const { challenge, expiresAt } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    expect(challenge.parameters.algorithm).toBe("SHA-256");
    expect(challenge.parameters.data).toEqual({ project_id: "prj_a" });
    expect(challenge.parameters.expiresAt).toBe(NOW / 1000 + 600);
    expect(expiresAt).toBe(NOW + 600_000);
    expect(challenge.signature).toMatch(/^[0-9a-f]{64}$/);
  });

  it("makes the solver work up to the secret counter, within the difficulty's range", async () => {
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const solution = await solveChallenge({ challenge, deriveKey });
    expect(solution!.counter).toBeGreaterThanOrEqual(EASY.counterMin);
    expect(solution!.counter).toBeLessThanOrEqual(EASY.counterMax);
  });
});

describe("checkChallengeToken", () => {
  it("accepts a solved token and reports its id, project and expiry", async () => {
    const { challenge, expiresAt } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const check = await checkChallengeToken(secrets, await solve(challenge), NOW + 1000);
    expect(check).toEqual({ ok: true, id: challenge.parameters.nonce, projectId: "prj_a", expiresAt });
  });

  it("answers malformed for what is not a token", async () => {
    for (const token of ["", "not base64!", Buffer.from("{}").toString("base64"), Buffer.from("[1]").toString("base64"), "x".repeat(5000)]) {
      expect(await checkChallengeToken(secrets, token, NOW)).toMatchObject({ ok: false, reason: "malformed", projectId: null });
    }
  });

  it("answers malformed for a v1 (salt/number) payload and for another algorithm", async () => {
    const v1 = Buffer.from(JSON.stringify({ algorithm: "SHA-256", challenge: "ab", number: 1, salt: "s?expires=1&", signature: "cd" })).toString("base64");
    expect(await checkChallengeToken(secrets, v1, NOW)).toMatchObject({ reason: "malformed" });
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const other = await solve(challenge, (p) => (p.challenge.parameters.algorithm = "SHA-512"));
    expect(await checkChallengeToken(secrets, other, NOW)).toMatchObject({ reason: "malformed" });
  });

  it("answers bad_signature for a changed project, a changed signature, or another install's secret", async () => {
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const moved = await solve(challenge, (p) => (p.challenge.parameters.data.project_id = "prj_b"));
    expect(await checkChallengeToken(secrets, moved, NOW)).toEqual({ ok: false, reason: "bad_signature", projectId: null, expiresAt: null });
    const resigned = await solve(challenge, (p) => (p.challenge.signature = "0".repeat(64)));
    expect(await checkChallengeToken(secrets, resigned, NOW)).toMatchObject({ reason: "bad_signature" });
    const unsigned = await solve(challenge, (p) => delete p.challenge.signature);
    expect(await checkChallengeToken(secrets, unsigned, NOW)).toMatchObject({ reason: "bad_signature" });
    const other = challengeSecrets("f".repeat(64));
    expect(await checkChallengeToken(other, await solve(challenge), NOW)).toMatchObject({ reason: "bad_signature" });
  });

  it("answers bad_signature for a longer expiry (the expiry is signed)", async () => {
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const kept = await solve(challenge, (p) => (p.challenge.parameters.expiresAt += 3600));
    expect(await checkChallengeToken(secrets, kept, NOW)).toMatchObject({ reason: "bad_signature" });
  });

  it("answers wrong_solution for a derived key that is not the solution", async () => {
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const wrong = await solve(challenge, (p) => (p.solution.derivedKey = "ab".repeat(32)));
    expect(await checkChallengeToken(secrets, wrong, NOW)).toMatchObject({ ok: false, reason: "wrong_solution", projectId: "prj_a" });
    const garbage = await solve(challenge, (p) => (p.solution.derivedKey = "zz"));
    expect(await checkChallengeToken(secrets, garbage, NOW)).toMatchObject({ reason: "wrong_solution" });
  });

  it("answers expired at and after the expiry on the request clock", async () => {
    const { challenge, expiresAt } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const token = await solve(challenge);
    expect(await checkChallengeToken(secrets, token, expiresAt - 1)).toMatchObject({ ok: true });
    expect(await checkChallengeToken(secrets, token, expiresAt)).toEqual({ ok: false, reason: "expired", projectId: "prj_a", expiresAt });
  });

  it("answers expired when the real clock is past the expiry (altcha-lib's own check)", async () => {
    const past = Date.UTC(2001, 0, 1);
    const { challenge } = await issueChallenge(secrets, "prj_a", past, EASY);
    expect(await checkChallengeToken(secrets, await solve(challenge), past)).toMatchObject({ reason: "expired" });
  });
});

describe("decodeChallengeToken", () => {
  it("keeps every field as sent (the signature covers all parameters)", async () => {
    const { challenge } = await issueChallenge(secrets, "prj_a", NOW, EASY);
    const token = await solve(challenge, (p) => (p.challenge.parameters.extra = "x"));
    expect((decodeChallengeToken(token)!.challenge.parameters as any).extra).toBe("x");
    expect(await checkChallengeToken(secrets, token, NOW)).toMatchObject({ reason: "bad_signature" });
  });
});

describe("createChallengeService", () => {
  const projects = new Map([
    ["prj_a", project("prj_a", "org_a")],
    ["prj_b", project("prj_b", "org_b")],
  ]);
  const makeService = () => {
    const spent = new Set<string>();
    const calls: Array<[string, number]> = [];
    const service = createChallengeService({
      secret: SECRET,
      projects,
      difficulty: EASY,
      spend: async (id, expiresAt) => {
        calls.push([id, expiresAt]);
        if (spent.has(id)) return false;
        spent.add(id);
        return true;
      },
    });
    return { service, calls };
  };

  it("accepts a token once, then answers already_used", async () => {
    const { service, calls } = makeService();
    const { challenge, expiresAt } = await service.issue("prj_a", NOW);
    const token = await solve(challenge);
    expect(await service.verify("org_a", token, NOW)).toEqual({ valid: true, reason: null, project_id: "prj_a", expires_at: expiresAt });
    expect(await service.verify("org_a", token, NOW)).toEqual({ valid: false, reason: "already_used", project_id: "prj_a", expires_at: expiresAt });
    expect(calls).toEqual([
      [challenge.parameters.nonce, expiresAt],
      [challenge.parameters.nonce, expiresAt],
    ]);
  });

  it("answers wrong_project for another org's project and does not spend the token", async () => {
    const { service, calls } = makeService();
    const { challenge } = await service.issue("prj_a", NOW);
    const token = await solve(challenge);
    expect(await service.verify("org_b", token, NOW)).toMatchObject({ valid: false, reason: "wrong_project", project_id: "prj_a" });
    expect(calls).toEqual([]);
    expect(await service.verify("org_a", token, NOW)).toMatchObject({ valid: true });
  });

  it("answers wrong_project for a project that no longer exists", async () => {
    const { service } = makeService();
    const { challenge } = await service.issue("prj_gone", NOW);
    expect(await service.verify("org_a", await solve(challenge), NOW)).toMatchObject({ reason: "wrong_project" });
  });

  it("does not spend invalid tokens", async () => {
    const { service, calls } = makeService();
    expect(await service.verify("org_a", "garbage", NOW)).toEqual({ valid: false, reason: "malformed", project_id: null, expires_at: null });
    expect(calls).toEqual([]);
  });

  it("passes a failed spend on as an error, never as valid", async () => {
    const service = createChallengeService({ secret: SECRET, projects, difficulty: EASY, spend: () => Promise.reject(new Error("writer down")) });
    const { challenge } = await service.issue("prj_a", NOW);
    await expect(service.verify("org_a", await solve(challenge), NOW)).rejects.toThrow("writer down");
  });

  it("rejects a short secret and impossible difficulties at construction", () => {
    const spend = async () => true;
    expect(() => createChallengeService({ secret: "short", projects, spend })).toThrow(/at least 32/);
    expect(() => createChallengeService({ secret: SECRET, projects, spend, difficulty: { ...EASY, cost: 0 } })).toThrow(/cost/);
    expect(() => createChallengeService({ secret: SECRET, projects, spend, difficulty: { ...EASY, counterMin: 10, counterMax: 5 } })).toThrow(/counterMin/);
    expect(() => createChallengeService({ secret: SECRET, projects, spend, difficulty: { ...EASY, ttlSeconds: 0 } })).toThrow(/ttlSeconds/);
    expect(createChallengeService({ secret: SECRET, projects, spend }).difficulty).toEqual(DEFAULT_DIFFICULTY);
  });
});
