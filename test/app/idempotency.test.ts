import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { CHECK, orgsNamed, post, used } from "../helpers/idempotency.js";
import { ADMIN_TOKEN, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("Idempotency-Key", () => {
  it("a retry with the same key and body gets the first answer again and is not charged again", async () => {
    const org = await createOrgWithKey(server);
    const k = randomUUID();
    const first = await post(server, "/v1/check", org.key, CHECK, k);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(JSON.parse(first.text).metadata.credits).toBe(2);
    const again = await post(server, "/v1/check", org.key, CHECK, k);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-request-id")).not.toBe(JSON.parse(first.text).metadata.request_id);
    expect(await used(server, org.orgId, org.key)).toBe(2);
    // Without a key, or with another key, the call runs and is charged.
    expect((await post(server, "/v1/check", org.key, CHECK)).status).toBe(200);
    expect((await post(server, "/v1/check", org.key, CHECK, randomUUID())).status).toBe(200);
    expect(await used(server, org.orgId, org.key)).toBe(6);
  });

  it("the same key with another body, path or org: 422 for the same org, independent for another", async () => {
    const org = await createOrgWithKey(server);
    const other = await createOrgWithKey(server);
    const k = randomUUID();
    expect((await post(server, "/v1/check", org.key, CHECK, k)).status).toBe(200);
    const changed = await api(server, "POST", "/v1/check", { key: org.key, body: { form_id: "signup", metadata: { ip: "8.8.4.4" } }, headers: { "idempotency-key": k } });
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    const otherPath = await api(server, "POST", "/v1/content", { key: org.key, body: { text: "hello there" }, headers: { "idempotency-key": k } });
    expect(otherPath.body.error?.code).toBe("IDEMPOTENCY_KEY_REUSED");
    // Keys are per org: another org's identical call runs and is charged.
    const theirs = await post(server, "/v1/check", other.key, CHECK, k);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(await used(server, other.orgId, other.key)).toBe(2);
    expect(await used(server, org.orgId, org.key)).toBe(2);
  });

  it("errors are not stored: after a 400 the key can carry the corrected request", async () => {
    const org = await createOrgWithKey(server);
    const k = randomUUID();
    const bad = await api(server, "POST", "/v1/check", { key: org.key, body: { form_id: "signup", metadata: { ip: "not-an-ip" } }, headers: { "idempotency-key": k } });
    expect(bad.status).toBe(400);
    const good = await post(server, "/v1/check", org.key, CHECK, k);
    expect(good.status).toBe(200);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
    expect(await used(server, org.orgId, org.key)).toBe(2);
  });

  it("refuses a malformed key with a 400 naming the header", async () => {
    const org = await createOrgWithKey(server);
    for (const k of ["has space", "x".repeat(256), "tab\tkey"]) {
      const r = await api(server, "POST", "/v1/check", { key: org.key, body: CHECK, headers: { "idempotency-key": k } });
      expect(r.status, k).toBe(400);
      expect(r.body.error.message).toMatch(/^header\.idempotency-key/);
    }
    expect(await used(server, org.orgId, org.key)).toBe(0);
  });

  it("concurrent calls with one key: one runs and is charged, the others get its answer or 409", async () => {
    const org = await createOrgWithKey(server);
    const k = randomUUID();
    const all = await Promise.all(Array.from({ length: 8 }, () => post(server, "/v1/check", org.key, CHECK, k)));
    const ok = all.filter((r) => r.status === 200);
    const busy = all.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(8);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(JSON.parse(r.text).error.code).toBe("IDEMPOTENCY_KEY_IN_USE");
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    expect(await used(server, org.orgId, org.key)).toBe(2);
  });

  it("uncharged POSTs too: an admin create retried creates one org", async () => {
    const k = randomUUID();
    const body = { name: `idem ${k}`, plan: "free" };
    const a = await post(server, "/v1/admin/orgs", ADMIN_TOKEN, body, k);
    const b = await post(server, "/v1/admin/orgs", ADMIN_TOKEN, body, k);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.text).toBe(a.text);
    expect(await orgsNamed(server, body.name)).toBe(1);
  });

  it("keys expire after 24 hours: the same call then runs again", async () => {
    const org = await createOrgWithKey(server);
    const k = randomUUID();
    const now = Date.now();
    expect((await post(server, "/v1/check", org.key, CHECK, k, { "x-fs-test-now": String(now) })).status).toBe(200);
    const within = await post(server, "/v1/check", org.key, CHECK, k, { "x-fs-test-now": String(now + 23 * 3600_000) });
    expect(within.headers.get("idempotent-replayed")).toBe("true");
    const after = await post(server, "/v1/check", org.key, CHECK, k, { "x-fs-test-now": String(now + 25 * 3600_000) });
    expect(after.status).toBe(200);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
  });

});
