import { solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";
import { beforeAll, describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

let site: Awaited<ReturnType<typeof createBeaconProject>>;
let otherOrgKey: string;
beforeAll(async () => {
  site = await createBeaconProject(server);
  otherOrgKey = (await createOrgWithKey(server)).key;
});

/** GET /v1/challenge with the site's publishable key. */
async function issue(headers: Record<string, string> = {}): Promise<{ challenge: Challenge; expires_at: number }> {
  const r = await api(server, "GET", "/v1/challenge", { key: site.publishableKey, headers });
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Solves a challenge as the widget would (altcha-lib's solver) and returns the form field's value. */
async function solve(challenge: Challenge, tamper?: (payload: any) => void): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 20_000 });
  if (!solution) throw new Error("no solution");
  const payload: any = { challenge: structuredClone(challenge), solution };
  tamper?.(payload);
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

function verify(token: unknown, key = site.secretKey, headers: Record<string, string> = {}) {
  return api(server, "POST", "/v1/challenge/verify", { key, body: { token }, headers });
}

describe("GET /v1/challenge", () => {
  it("issues a signed SHA-256 challenge for the key's project, free and uncacheable", async () => {
    const r = await api(server, "GET", "/v1/challenge", { key: site.publishableKey });
    expect(r.status).toBe(200);
    expect(r.body.error).toBeNull();
    const { challenge, expires_at, difficulty } = r.body.data;
    expect(challenge.parameters).toMatchObject({ algorithm: "SHA-256", data: { project_id: site.projectId } });
    expect(challenge.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(expires_at).toBe(challenge.parameters.expiresAt * 1000);
    expect(difficulty).toMatchObject({ algorithm: "SHA-256" });
    expect(r.body.metadata.credits).toBe(0);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("answers CORS preflights and echoes the page's origin", async () => {
    const pre = await server.fetch(`${server.url}/v1/challenge`, {
      method: "OPTIONS",
      headers: { origin: "https://shop.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const r = await api(server, "GET", "/v1/challenge", { key: site.publishableKey, headers: { origin: "https://shop.example" } });
    expect(r.headers.get("access-control-allow-origin")).toBe("https://shop.example");
  });

  it("refuses a secret key (it is a browser endpoint)", async () => {
    const r = await api(server, "GET", "/v1/challenge", { key: site.secretKey });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
  });
});

describe("POST /v1/challenge/verify", () => {
  let token: string;
  let issued: { challenge: Challenge; expires_at: number };

  it("accepts a solved token once and charges 1 credit", async () => {
    issued = await issue();
    token = await solve(issued.challenge);
    const r = await verify(token);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ valid: true, reason: null, project_id: site.projectId, expires_at: issued.expires_at });
    expect(r.body.metadata.credits).toBe(1);
  });

  it("answers already_used for a replay, still as a charged 200", async () => {
    const r = await verify(token);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ valid: false, reason: "already_used", project_id: site.projectId });
    expect(r.body.metadata.credits).toBe(1);
  });

  it("answers bad_signature for a token moved to another project or re-signed", async () => {
    const { challenge } = await issue();
    const moved = await solve(challenge, (p) => (p.challenge.parameters.data.project_id = "prj_other"));
    expect((await verify(moved)).body.data).toEqual({ valid: false, reason: "bad_signature", project_id: null, expires_at: null });
    const resigned = await solve(challenge, (p) => (p.challenge.signature = "0".repeat(64)));
    expect((await verify(resigned)).body.data).toMatchObject({ valid: false, reason: "bad_signature" });
  });

  it("answers wrong_solution for a made-up derived key", async () => {
    const { challenge } = await issue();
    const wrong = await solve(challenge, (p) => (p.solution.derivedKey = "ab".repeat(32)));
    expect((await verify(wrong)).body.data).toMatchObject({ valid: false, reason: "wrong_solution", project_id: site.projectId });
  });

  it("answers expired once the request clock passes expires_at", async () => {
    const { challenge, expires_at } = await issue();
    const solved = await solve(challenge);
    const r = await verify(solved, site.secretKey, { "x-fs-test-now": String(expires_at + 1) });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ valid: false, reason: "expired", project_id: site.projectId, expires_at });
    expect(r.body.metadata.credits).toBe(1);
  });

  it("answers wrong_project to another org's key, without using the token up", async () => {
    const { challenge } = await issue();
    const solved = await solve(challenge);
    expect((await verify(solved, otherOrgKey)).body.data).toMatchObject({ valid: false, reason: "wrong_project" });
    expect((await verify(solved)).body.data).toMatchObject({ valid: true });
  });

  it("answers malformed (200) for a string that is not a token", async () => {
    const r = await verify("definitely-not-a-token");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ valid: false, reason: "malformed", project_id: null, expires_at: null });
    expect(r.body.metadata.credits).toBe(1);
  });

  it("refuses a missing token or bad JSON with 400, uncharged", async () => {
    const missing = await api(server, "POST", "/v1/challenge/verify", { key: site.secretKey, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("VALIDATION_ERROR");
    expect(missing.body.error.message).toContain("body.token");
    const badJson = await api(server, "POST", "/v1/challenge/verify", { key: site.secretKey, rawBody: "{", headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    expect(badJson.body.metadata.credits).toBe(0);
  });

  it("refuses a publishable key", async () => {
    const r = await verify(token, site.publishableKey);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
  });

  it("accepts exactly one of 10 concurrent verifications of one token", async () => {
    const { challenge } = await issue();
    const solved = await solve(challenge);
    const answers = await Promise.all(Array.from({ length: 10 }, () => verify(solved)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const reasons = answers.map((a) => a.body.data.reason);
    expect(reasons.filter((r) => r === null)).toHaveLength(1);
    expect(reasons.filter((r) => r === "already_used")).toHaveLength(9);
  });

  it("remembers spent tokens, and the signing secret, across a restart", async () => {
    const pending = await solve((await issue()).challenge);
    await server.stop();
    await server.restart();
    expect((await verify(token)).body.data).toMatchObject({ valid: false, reason: "already_used" });
    // Issued before the restart, verified after it: the secret is the install's, not the process's.
    expect((await verify(pending)).body.data).toMatchObject({ valid: true, project_id: site.projectId });
  });
});
