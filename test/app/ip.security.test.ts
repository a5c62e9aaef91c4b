import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("GET /v1/ip/{ip} authentication", () => {
  it("401 MISSING_KEY without Authorization", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8");
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("MISSING_KEY");
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="fraudscore"');
  });

  it("401 INVALID_KEY for unknown, malformed and tampered keys", async () => {
    const k = server.demo.secretKey;
    const tampered = k.slice(0, -1) + (k.endsWith("A") ? "B" : "A");
    for (const key of ["fs_live_nope", "garbage", tampered, "fs_live_" + "A".repeat(44), ADMIN_TOKEN]) {
      const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key });
      expect(r.status, key).toBe(401);
      expect(r.body.error.code).toBe("INVALID_KEY");
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="fraudscore", error="invalid_token"');
    }
    const basic = await api(server, "GET", "/v1/ip/8.8.8.8", { headers: { authorization: "Basic abc" } });
    expect(basic.body.error.code).toBe("INVALID_KEY");
  });

  it("403 KEY_TYPE_NOT_ALLOWED for a publishable key on a server endpoint", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.publishableKey });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
  });

  it("401 EXPIRED_KEY once the expiry passes", async () => {
    const org = await createOrgWithKey(server);
    const expiresAt = Date.now() + 60_000;
    const k = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", expires_at: new Date(expiresAt).toISOString() });
    expect(k.status).toBe(201);
    const ok = await api(server, "GET", "/v1/ip/8.8.8.8", { key: k.body.data.key });
    expect(ok.status).toBe(200);
    const later = await api(server, "GET", "/v1/ip/8.8.8.8", { key: k.body.data.key, headers: { "x-fs-test-now": String(expiresAt + 1) } });
    expect(later.status).toBe(401);
    expect(later.body.error.code).toBe("EXPIRED_KEY");
    expect(later.headers.get("www-authenticate")).toMatch(/^Bearer realm="fraudscore", error="invalid_token"/);
  });

  it("403 KEY_DISABLED right after the admin disables the key", async () => {
    const org = await createOrgWithKey(server);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).status).toBe(200);
    const d = await admin(server, "POST", `/v1/admin/keys/${org.keyId}/disable`);
    expect(d.status).toBe(200);
    expect(d.body.data.disabled).toBe(true);
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("KEY_DISABLED");
  });

  it("charges the key's own org only", async () => {
    const a = await createOrgWithKey(server);
    const b = await createOrgWithKey(server);
    await api(server, "GET", "/v1/ip/8.8.8.8", { key: a.key });
    const ua = await api(server, "GET", `/v1/orgs/${a.orgId}/usage`, { key: a.key });
    const ub = await api(server, "GET", `/v1/orgs/${b.orgId}/usage`, { key: b.key });
    expect(ua.body.data.used).toBe(1);
    expect(ub.body.data.used).toBe(0);
  });
});
