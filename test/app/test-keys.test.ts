import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** An org with a live secret key and a test secret key (scope `sessions`, for /v1/auth/check). */
async function orgWithTestKey() {
  const org = await createOrgWithKey(server, "free", ["sessions"]);
  const created = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions"] });
  expect(created.status).toBe(201);
  return { ...org, testKey: created.body.data.key as string, created: created.body.data };
}

const usedOf = async (orgId: string, key: string) => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used as number;

describe("test-mode keys (fs_test_…, fs_pub_test_…)", () => {
  it("are created with their own prefixes and mode, and a test key is no live key", async () => {
    const org = await orgWithTestKey();
    expect(org.testKey).toMatch(/^fs_test_[0-9A-Za-z]{44}$/);
    expect(org.created).toMatchObject({ mode: "test", key_redacted: expect.stringMatching(/^fs_test_…/) });
    const pub = await admin(server, "POST", `/v1/admin/orgs/${server.demo.orgId}/keys`, { type: "publishable", project_id: server.demo.projectId, mode: "test" });
    expect(pub.body.data.key).toMatch(/^fs_pub_test_/);
    const live = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret" });
    expect(live.body.data).toMatchObject({ mode: "live", key: expect.stringMatching(/^fs_live_/) });
    // The same id and secret under the live prefix is not a key.
    const posing = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.testKey.replace("fs_test_", "fs_live_") });
    expect(posing.body.error.code).toBe("INVALID_KEY");
  });

  it("answer with the real scoring, charge nothing and state credits 0, with no RateLimit headers", async () => {
    const org = await orgWithTestKey();
    const body = { form_id: "signup", metadata: { email: "jane.doe@gmail.com", ip: "8.8.8.8" } };
    const live = await api(server, "POST", "/v1/check", { key: org.key, body });
    const test = await api(server, "POST", "/v1/check", { key: org.testKey, body });
    expect(test.status).toBe(200);
    expect(test.body.metadata.credits).toBe(0);
    expect(test.headers.get("ratelimit")).toBeNull();
    expect(test.body.data.decision).toBe(live.body.data.decision);
    expect(test.body.data.score).toBe(live.body.data.score);
    expect(await usedOf(org.orgId, org.key)).toBe(live.body.metadata.credits);
    await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.testKey });
    expect(await usedOf(org.orgId, org.key)).toBe(live.body.metadata.credits);
  });

  it("touch no quota: an org out of credits is refused with its live key and answered with its test key", async () => {
    const org = await orgWithTestKey();
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 10_000, reason: "test" });
    const live = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    expect(live.body.error.code).toBe("QUOTA_EXCEEDED");
    const test = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.testKey });
    expect(test.status).toBe(200);
    expect(test.body.metadata.credits).toBe(0);
  });

  it("decide the documented magic inputs with a test key only", async () => {
    const org = await orgWithTestKey();
    const check = (key: string, metadata: object) => api(server, "POST", "/v1/check", { key, body: { form_id: "signup", metadata } });
    expect((await check(org.testKey, { email: "anyone@block.fraudscore.test" })).body.data).toMatchObject({ decision: "block", score: 0.99 });
    expect((await check(org.testKey, { ip: "203.0.113.66" })).body.data.decision).toBe("block");
    expect((await check(org.testKey, { email: "anyone@review.fraudscore.test" })).body.data.decision).toBe("review");
    expect((await check(org.testKey, { ip: "203.0.113.11" })).body.data.decision).toBe("allow");
    expect((await check(org.key, { ip: "203.0.113.66" })).body.data.decision).not.toBe("block");
    const deep = (key: string, metadata: object) => api(server, "POST", "/v1/check/deep", { key, body: { form_id: "signup", metadata } });
    const deepBlock = await deep(org.testKey, { email: "anyone@block.fraudscore.test" });
    expect(deepBlock.status).toBe(200);
    expect(deepBlock.body.data).toMatchObject({ decision: "block", score: 0.99, check: { decision: "block", score: 0.99 } });
    expect(deepBlock.body.metadata.credits).toBe(0);
    expect((await deep(org.testKey, { ip: "203.0.113.55" })).body.data.decision).toBe("review");
    expect((await deep(org.testKey, { email: "anyone@allow.fraudscore.test" })).body.data).toMatchObject({ decision: "allow", score: 0.01 });
    expect((await deep(org.key, { ip: "203.0.113.66" })).body.data.decision).not.toBe("block");
    const auth = await api(server, "POST", "/v1/auth/check", { key: org.testKey, body: { observation_type: "auth.signup", email: "x@block.fraudscore.test" } });
    expect(auth.status).toBe(200);
    expect(auth.body.data.verdict.decision).toBe("block");
    expect(auth.body.metadata.credits).toBe(0);
  });
});
