import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("admin API", () => {
  it("rejects calls without the admin token or with an API key", async () => {
    expect((await api(server, "POST", "/v1/admin/orgs", { body: { name: "x" } })).body.error.code).toBe("MISSING_KEY");
    const wrong = await api(server, "POST", "/v1/admin/orgs", { key: "not-the-token", body: { name: "x" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("INVALID_KEY");
    const apiKey = await api(server, "POST", "/v1/admin/orgs", { key: server.demo.secretKey, body: { name: "x" } });
    expect(apiKey.status).toBe(401);
  });

  it("creates an org (plan free by default), a project and keys", async () => {
    const org = await admin(server, "POST", "/v1/admin/orgs", { name: "Acme" });
    expect(org.status).toBe(201);
    expect(org.body.data).toMatchObject({ name: "Acme", plan: "free" });
    expect(org.body.data.id).toMatch(/^org_/);
    const orgId = org.body.data.id;

    const project = await admin(server, "POST", `/v1/admin/orgs/${orgId}/projects`, { name: "web" });
    expect(project.status).toBe(201);
    expect(project.body.data).toMatchObject({ name: "web" });
    expect(project.body.data.id).toMatch(/^prj_/);

    const secret = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", scopes: ["sessions"] });
    expect(secret.status).toBe(201);
    expect(secret.body.data).toMatchObject({ type: "secret", scopes: ["sessions"] });
    expect(secret.body.data.key).toMatch(/^fs_live_[0-9A-Za-z]{44}$/);
    expect(secret.body.data).not.toHaveProperty("hash");

    const pub = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "publishable", project_id: project.body.data.id });
    expect(pub.status).toBe(201);
    expect(pub.body.data.key).toMatch(/^fs_pub_live_[0-9A-Za-z]{44}$/);
    expect(pub.body.data.project_id).toBe(project.body.data.id);

    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: secret.body.data.key })).status).toBe(200);
  });

  it("refuses names and reasons holding control characters, bidi controls or lone surrogates", async () => {
    for (const name of ["Acme\u202eInc", "Acme\u0000", "Acme\ud800", "two\nlines"]) {
      const r = await admin(server, "POST", "/v1/admin/orgs", { name });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.error.message).toMatch(/^body\.name: control characters/);
    }
    const ok = await admin(server, "POST", "/v1/admin/orgs", { name: "Acme GmbH & Co. KG \u00e9\ud83d\ude00" });
    expect(ok.status).toBe(201);
    const reason = await admin(server, "POST", `/v1/admin/orgs/${ok.body.data.id}/usage/adjust`, { credits: 1, reason: "refund\u202e" });
    expect(reason.status).toBe(400);
    const multiline = await admin(server, "POST", `/v1/admin/orgs/${ok.body.data.id}/usage/adjust`, { credits: 1, reason: "refund:\n\tticket 42" });
    expect(multiline.status).toBe(200);
  });

  it("validates key creation", async () => {
    const orgId = server.demo.orgId;
    const noProject = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "publishable" });
    expect(noProject.status).toBe(400);
    expect(noProject.body.error.message).toMatch(/^body\.project_id/);
    const past = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", expires_at: "2001-01-01T00:00:00Z" });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toMatch(/^body\.expires_at/);
    const badDate = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", expires_at: "tomorrow" });
    expect(badDate.status).toBe(400);
    const unknownField = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", admin: true });
    expect(unknownField.status).toBe(400);
  });

  it("refuses a project of another org and unknown orgs", async () => {
    const other = await admin(server, "POST", "/v1/admin/orgs", { name: "Other" });
    const key = await admin(server, "POST", `/v1/admin/orgs/${other.body.data.id}/keys`, { type: "publishable", project_id: server.demo.projectId });
    expect(key.status).toBe(404);
    expect(key.body.error.code).toBe("NOT_FOUND");
    const none = await admin(server, "POST", "/v1/admin/orgs/org_doesnotexist0000/projects", { name: "p" });
    expect(none.status).toBe(404);
    const patch = await admin(server, "PATCH", "/v1/admin/orgs/org_doesnotexist0000", { plan: "pro" });
    expect(patch.status).toBe(404);
    const disable = await admin(server, "POST", "/v1/admin/keys/key_doesnotexist/disable");
    expect(disable.status).toBe(404);
  });

  it("changes the plan, live on the next usage read", async () => {
    const org = await admin(server, "POST", "/v1/admin/orgs", { name: "Upgrader" });
    const orgId = org.body.data.id;
    const patch = await admin(server, "PATCH", `/v1/admin/orgs/${orgId}`, { plan: "business" });
    expect(patch.status).toBe(200);
    expect(patch.body.data.plan).toBe("business");
    const key = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: key.body.data.key });
    expect(usage.body.data).toMatchObject({ plan: "business", monthly_quota: 300000 });
    const empty = await admin(server, "PATCH", `/v1/admin/orgs/${orgId}`, {});
    expect(empty.status).toBe(400);
  });
});
