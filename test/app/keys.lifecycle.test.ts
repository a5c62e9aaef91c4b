import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** The org's keys as the admin list shows them. */
async function listed(orgId: string): Promise<Array<Record<string, unknown>>> {
  const r = await admin(server, "GET", `/v1/admin/orgs/${orgId}/keys?limit=100`);
  expect(r.status).toBe(200);
  return r.body.data.items;
}

describe("key lifecycle", () => {
  it("names a key at creation and renames it; the name is plain text on one line", async () => {
    const { orgId } = await createOrgWithKey(server);
    const made = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", name: "  checkout backend " });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ name: "checkout backend", last_used_at: null, rolled_from: null });
    const id = made.body.data.id;
    const renamed = await admin(server, "PATCH", `/v1/admin/keys/${id}`, { name: "checkout (eu)" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe("checkout (eu)");
    expect((await listed(orgId)).find((k) => k.id === id)?.name).toBe("checkout (eu)");
    expect((await admin(server, "PATCH", `/v1/admin/keys/${id}`, { name: null })).body.data.name).toBeNull();
    const bad = await admin(server, "PATCH", `/v1/admin/keys/${id}`, { name: "two\nlines" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("body.name");
    expect((await admin(server, "PATCH", "/v1/admin/keys/key_doesnotexist", { name: "x" })).status).toBe(404);
  });

  it("records when a key was last used", async () => {
    const { orgId, key, keyId } = await createOrgWithKey(server);
    expect((await listed(orgId)).find((k) => k.id === keyId)?.last_used_at).toBeNull();
    const before = Date.now();
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key })).status).toBe(200);
    await expect
      .poll(async () => (await listed(orgId)).find((k) => k.id === keyId)?.last_used_at, { timeout: 10_000 })
      .toEqual(expect.any(String));
    const at = Date.parse(String((await listed(orgId)).find((k) => k.id === keyId)!.last_used_at));
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("disables and re-enables a key: refused while disabled, accepted again after", async () => {
    const { key, keyId } = await createOrgWithKey(server);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`)).body.data.disabled).toBe(true);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key })).body.error.code).toBe("KEY_DISABLED");
    const enabled = await admin(server, "POST", `/v1/admin/keys/${keyId}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.data.disabled).toBe(false);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key })).status).toBe(200);
    // Enabling an enabled key changes nothing.
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/enable`)).body.data.disabled).toBe(false);
  });

  it("rolls a key: both work during the grace period, the new one keeps org, scopes and name", async () => {
    const { orgId, key: oldKey, keyId } = await createOrgWithKey(server, "free", ["sessions"]);
    await admin(server, "PATCH", `/v1/admin/keys/${keyId}`, { name: "worker" });
    const rolled = await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, { grace_seconds: 3600 });
    expect(rolled.status).toBe(201);
    const fresh = rolled.body.data;
    expect(fresh).toMatchObject({ org_id: orgId, type: "secret", scopes: ["sessions"], name: "worker", rolled_from: keyId, key_already_shown: false, expires_at: null });
    expect(fresh.key).toMatch(/^fs_live_/);
    expect(fresh.id).not.toBe(keyId);
    const graceEnd = Date.parse(fresh.previous.expires_at);
    expect(graceEnd - Date.now()).toBeGreaterThan(3_500_000);
    expect(graceEnd - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: oldKey })).status).toBe(200);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: fresh.key })).status).toBe(200);
    expect((await listed(orgId)).map((k) => k.id)).toEqual(expect.arrayContaining([keyId, fresh.id]));
  });

  it("ends the old key at once with a grace of 0, and keeps an earlier expiry of its own", async () => {
    const { key: oldKey, keyId } = await createOrgWithKey(server);
    const rolled = await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, { grace_seconds: 0 });
    expect(rolled.status).toBe(201);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: oldKey })).body.error.code).toBe("EXPIRED_KEY");
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: rolled.body.data.key })).status).toBe(200);
    // An expired key cannot be rolled again; the new one can, and its own earlier expiry wins over the grace.
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, {})).status).toBe(400);
    const { orgId } = await createOrgWithKey(server);
    const soon = new Date(Date.now() + 600_000).toISOString();
    const short = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", expires_at: soon });
    const again = await admin(server, "POST", `/v1/admin/keys/${short.body.data.id}/roll`, { grace_seconds: 86_400 });
    expect(again.body.data.previous.expires_at).toBe(short.body.data.expires_at);
  });

  it("refuses to roll a disabled key, and validates the grace period", async () => {
    const { keyId } = await createOrgWithKey(server);
    for (const grace_seconds of [-1, 1.5, 30 * 86_400 + 1, "3600"]) {
      const r = await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, { grace_seconds });
      expect(r.status, String(grace_seconds)).toBe(400);
      expect(r.body.error.param).toBe("body.grace_seconds");
    }
    await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`);
    const r = await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, {});
    expect(r.status).toBe(400);
    // Found against the stored key: one problem, named as a schema's are.
    const problem = { param: "path.keyId", message: "a disabled key cannot be rolled: enable it first, or create a new key." };
    expect(r.body.error).toEqual({ code: "VALIDATION_ERROR", message: `${problem.param}: ${problem.message}`, param: problem.param, problems: [problem] });
    expect((await admin(server, "POST", "/v1/admin/keys/key_doesnotexist/roll", {})).status).toBe(404);
  });

  it("replays a roll with the same Idempotency-Key without a second key or the secret", async () => {
    const { orgId, keyId } = await createOrgWithKey(server);
    const headers = { "idempotency-key": `roll-${keyId}` };
    const first = await api(server, "POST", `/v1/admin/keys/${keyId}/roll`, { key: ADMIN_TOKEN, body: {}, headers });
    expect(first.status).toBe(201);
    expect(first.body.data.key).toMatch(/^fs_live_/);
    const again = await api(server, "POST", `/v1/admin/keys/${keyId}/roll`, { key: ADMIN_TOKEN, body: {}, headers });
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ id: first.body.data.id, key: null, key_already_shown: true });
    expect((await listed(orgId)).length).toBe(2);
  });

  it("deletes a key: refused exactly as an unknown key, gone from the list, not enabled again", async () => {
    const { orgId, key, keyId } = await createOrgWithKey(server);
    const unknown = await api(server, "GET", "/v1/ip/1.1.1.1", { key: key.slice(0, -4) + "AAAA" });
    const del = await admin(server, "DELETE", `/v1/admin/keys/${keyId}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: keyId, deleted: true });
    const after = await api(server, "GET", "/v1/ip/1.1.1.1", { key });
    expect(after.status).toBe(401);
    expect(after.body.error).toEqual(unknown.body.error);
    expect((await listed(orgId)).map((k) => k.id)).not.toContain(keyId);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/enable`)).status).toBe(404);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`)).status).toBe(404);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/roll`, {})).status).toBe(404);
    // Deleting again answers the same; an unknown id is 404.
    expect((await admin(server, "DELETE", `/v1/admin/keys/${keyId}`)).body.data).toEqual({ id: keyId, deleted: true });
    expect((await admin(server, "DELETE", "/v1/admin/keys/key_doesnotexist")).status).toBe(404);
  });
});
