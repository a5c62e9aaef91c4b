import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 38, finding 2: managing a key in the dashboard (roll, disable, enable, delete) needs every
 * scope and the mode of the key managed (front/capabilities.ts). A session of a scopeless key, or
 * of a test key, used to roll the org's `sessions,billing` live key with a grace of 0 and be shown
 * its new secret. Creating a key needs the same of a test key as of a live one, and a test key's
 * session changes no live setting and labels no live check.
 */

let server!: TestApp;
useApp((s) => (server = s));

const PITCH = "Cheap followers and guaranteed backlinks for your site, best SEO package, limited offer, click now";

/** A signed-in browser of the dashboard, in-process: its cookie and CSRF token. */
async function session(key: string) {
  const login = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  const text = await login.text();
  expect(login.status, text).toBe(303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  const get = async (path: string) => {
    const res = await server.fetch(server.url + path, { headers: { cookie }, redirect: "manual" });
    return { status: res.status, location: res.headers.get("location"), text: await res.text() };
  };
  const home = await get("/dashboard/keys");
  expect(home.status).toBe(200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return {
    get,
    /** POSTs a form; follows its 303 once, to read the message (flash) the browser is shown there. */
    async post(path: string, fields: Record<string, string | string[]>) {
      const body = new URLSearchParams({ csrf });
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
      const res = await server.fetch(server.url + path, {
        method: "POST",
        headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
        body: body.toString(),
        redirect: "manual",
      });
      const answered = await res.text();
      // Refused by the capability the action declares, before it runs: a 403 page, no redirect.
      if (res.status === 403) return { location: null, kind: "forbidden", text: answered, secret: null };
      expect(res.status).toBe(303);
      const location = res.headers.get("location")!;
      const page = location.startsWith("/dashboard") && !location.startsWith("/dashboard/login") ? await get(location) : null;
      const flash = page && /<div class="flash (\w+)" role="\w+"><p>([^<]*)<\/p>/.exec(page.text);
      return {
        location,
        kind: flash?.[1] ?? null,
        text: unescape(flash?.[2] ?? ""),
        secret: page && /id="new-secret" class="secret" readonly value="([^"]+)"/.exec(page.text)?.[1],
      };
    },
  };
}

function unescape(html: string): string {
  return html
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

async function newKey(orgId: string, body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.data.id, key: r.body.data.key };
}

/** What a call with the key answers: 200 while it works. */
const works = async (orgId: string, key: string) => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).status;
const keyCount = async (orgId: string) => (await admin(server, "GET", `/v1/admin/orgs/${orgId}/keys?limit=100`)).body.data.items.length as number;

type Session = Awaited<ReturnType<typeof session>>;

/**
 * Every change of `target` from `s` is refused with `reason` in its message (403
 * INSUFFICIENT_SCOPE, as the error flash), its confirmation page is a 403, and the key still works
 * afterwards, unrolled, enabled, undeleted.
 */
async function refusedEverything(s: Session, orgId: string, target: { id: string; key: string }, reason: RegExp): Promise<void> {
  const before = await keyCount(orgId);
  for (const change of ["roll", "disable", "delete"]) {
    const page = await s.get(`/dashboard/keys/confirm?do=${change}&key=${target.id}`);
    expect([change, page.status]).toEqual([change, 403]);
    expect(unescape(page.text)).toMatch(reason);
    const r = await s.post(`/dashboard/keys/${change}`, { key: target.id, confirm: "yes", grace_seconds: "0" });
    expect([change, r.location, r.kind]).toEqual([change, "/dashboard/keys", "error"]);
    expect(r.text).toMatch(reason);
    expect(r.secret ?? null).toBeNull();
    expect([change, await works(orgId, target.key)]).toEqual([change, 200]);
  }
  expect(await keyCount(orgId)).toBe(before);
  // Enabling a key the owner disabled is refused as well: it stays disabled.
  await admin(server, "POST", `/v1/admin/keys/${target.id}/disable`);
  const enable = await s.post("/dashboard/keys/enable", { key: target.id });
  expect([enable.kind, enable.text]).toEqual(["error", expect.stringMatching(reason)]);
  expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: target.key })).body.error.code).toBe("KEY_DISABLED");
  await admin(server, "POST", `/v1/admin/keys/${target.id}/enable`);
  expect(await works(orgId, target.key)).toBe(200);
  // The keys page offers no button for it.
  const listing = (await s.get("/dashboard/keys")).text;
  expect(listing).toContain(`data-refused="${target.id}"`);
  expect(listing).not.toContain(`do=roll&amp;key=${target.id}"`);
}

describe("who may manage a key in the dashboard", () => {
  it("a scopeless key's session cannot roll, disable, delete or enable the org's sessions,billing key", async () => {
    const owner = await createOrgWithKey(server, "free", ["sessions", "billing"]);
    const weak = await newKey(owner.orgId, { type: "secret" });
    const s = await session(weak.key);
    await refusedEverything(
      s,
      owner.orgId,
      { id: owner.keyId, key: owner.key },
      /carries the 'sessions', 'billing' scopes, which the key you signed in with lacks/,
    );
    // A key with one of the two scopes is refused too, naming the one it lacks.
    const half = await newKey(owner.orgId, { type: "secret", scopes: ["sessions"] });
    const r = await (await session(half.key)).post("/dashboard/keys/roll", { key: owner.keyId, confirm: "yes", grace_seconds: "0" });
    expect(r.text).toMatch(/^Key key_\w+ carries the 'billing' scope, which the key you signed in with lacks/);
    expect(await works(owner.orgId, owner.key)).toBe(200);
  });

  it("a test key's session cannot manage a live key, even one with fewer scopes, nor create one", async () => {
    const owner = await createOrgWithKey(server, "free", ["sessions", "billing"]);
    const test = await newKey(owner.orgId, { type: "secret", mode: "test", scopes: ["sessions", "billing"] });
    const plainLive = await newKey(owner.orgId, { type: "secret" });
    const s = await session(test.key);
    await refusedEverything(
      s,
      owner.orgId,
      { id: owner.keyId, key: owner.key },
      /is a live key, and you signed in with a test key \(fs_test_…\), which manages test keys only/,
    );
    await refusedEverything(s, owner.orgId, plainLive, /is a live key, and you signed in with a test key/);
    const before = await keyCount(owner.orgId);
    const live = await s.post("/dashboard/keys", { type: "secret", mode: "live" });
    expect([live.kind, live.text, live.secret ?? null]).toEqual(["error", expect.stringMatching(/creates test keys only/), null]);
    const noMode = await s.post("/dashboard/keys", { type: "secret" });
    expect(noMode.kind).toBe("error");
    expect(await keyCount(owner.orgId)).toBe(before);
    // The form offers the test mode only.
    expect((await s.get("/dashboard/keys")).text).not.toContain('<option value="live">live</option>');
    // A test key it may create: one with its scopes or fewer, in test mode.
    const made = await s.post("/dashboard/keys", { type: "secret", mode: "test", scopes: ["billing"] });
    expect([made.kind, made.secret]).toEqual(["ok", expect.stringMatching(/^fs_test_/)]);
  });

  it("a scopeless live key's session creates no key with a scope, live or test alike", async () => {
    const owner = await createOrgWithKey(server, "free", ["sessions", "billing"]);
    const weak = await newKey(owner.orgId, { type: "secret" });
    const s = await session(weak.key);
    for (const mode of ["live", "test"]) {
      const r = await s.post("/dashboard/keys", { type: "secret", mode, scopes: ["sessions"] });
      expect([mode, r.kind, r.text]).toEqual([mode, "error", "A new key can carry only scopes of the key you signed in with; this one lacks sessions."]);
    }
    expect(await keyCount(owner.orgId)).toBe(2);
  });

  it("a test key's session changes no live setting and labels no live check", async () => {
    const owner = await createOrgWithKey(server, "free", ["sessions", "billing"]);
    const project = await admin(server, "POST", `/v1/admin/orgs/${owner.orgId}/projects`, { name: "site" });
    const projectId = project.body.data.id as string;
    const test = await newKey(owner.orgId, { type: "secret", mode: "test", scopes: ["sessions", "billing"] });
    const s = await session(test.key);
    const refusals: Array<[string, Record<string, string | string[]>]> = [
      ["/dashboard/projects/origins", { project: projectId, origins: "https://evil.example" }],
      ["/dashboard/projects", { name: "another" }],
      ["/dashboard/policy", { project: projectId, "kind.search_crawler": "block" }],
      ["/dashboard/webhooks", { url: "https://hooks.example.com/fs", events: ["usage.threshold"] }],
      ["/dashboard/checks/history", { mode: "text", days: "30" }],
    ];
    // Billing needs a live key by its declared capability: refused with a 403 page before the action runs.
    for (const [path, fields] of [
      ["/dashboard/billing/checkout", { plan: "pro" }],
      ["/dashboard/billing/portal", {}],
    ] as const) {
      const r = await s.post(path, fields);
      expect([path, r.kind]).toEqual([path, "forbidden"]);
    }
    for (const [path, fields] of refusals) {
      const r = await s.post(path, fields);
      expect([path, r.kind, r.text]).toEqual([
        path,
        "error",
        expect.stringMatching(/^You signed in with a test key \(fs_test_…\), which cannot change .+: live traffic uses it/),
      ]);
    }
    const projects = (await admin(server, "GET", `/v1/admin/orgs/${owner.orgId}/projects`)).body.data.items;
    expect(projects.map((p: { allowed_origins: string[] }) => p.allowed_origins)).toEqual([[]]);
    expect((await api(server, "GET", `/v1/projects/${projectId}/bot-policy`, { key: owner.key })).body.data.stored).toBeNull();
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/webhooks`, { key: owner.key })).body.data.items).toEqual([]);
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/check-history`, { key: owner.key })).body.data.mode).not.toBe("text");
    // A live check: the test session neither lists it nor labels it (its feedback is a test key's).
    const check = await api(server, "POST", "/v1/check", { key: owner.key, body: { form_id: "contact", form_data: { name: "Li Wei", message: PITCH } } });
    const requestId = check.body.metadata.request_id as string;
    const checksPage = (await s.get("/dashboard/checks")).text;
    expect(checksPage).not.toContain(requestId);
    expect(checksPage).toContain('<p class="data-toggle" data-mode="test">');
    expect(checksPage).not.toContain("live data</a>");
    const label = await s.post("/dashboard/checks/feedback", { request_id: requestId, label: "spam", back: "/dashboard/checks" });
    expect(label.kind).toBe("error");
    const listed = (await api(server, "GET", `/v1/orgs/${owner.orgId}/checks`, { key: owner.key })).body.data.items;
    expect(listed.find((c: { request_id: string }) => c.request_id === requestId)).toMatchObject({ label: null });
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/feedback`, { key: owner.key })).body.data.feedback).toMatchObject({ spam: 0, ham: 0 });
  });

  it("a session whose key holds every scope still rolls, disables, enables and deletes (positive control)", async () => {
    const owner = await createOrgWithKey(server, "free", ["sessions", "billing"]);
    const s = await session(owner.key);
    const peer = await newKey(owner.orgId, { type: "secret", scopes: ["sessions", "billing"] });
    const weak = await newKey(owner.orgId, { type: "secret" });
    const testKey = await newKey(owner.orgId, { type: "secret", mode: "test", scopes: ["sessions"] });
    const listing = (await s.get("/dashboard/keys")).text;
    expect(listing).not.toContain("data-refused=");
    expect(listing).toContain(`do=roll&amp;key=${peer.id}"`);
    const rolled = await s.post("/dashboard/keys/roll", { key: peer.id, confirm: "yes", grace_seconds: "0" });
    expect([rolled.kind, rolled.secret]).toEqual(["ok", expect.stringMatching(/^fs_live_/)]);
    expect(await works(owner.orgId, rolled.secret!)).toBe(200);
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/usage`, { key: peer.key })).body.error.code).toBe("EXPIRED_KEY");
    expect((await s.post("/dashboard/keys/disable", { key: weak.id, confirm: "yes" })).kind).toBe("ok");
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/usage`, { key: weak.key })).body.error.code).toBe("KEY_DISABLED");
    expect((await s.post("/dashboard/keys/enable", { key: weak.id })).kind).toBe("ok");
    expect(await works(owner.orgId, weak.key)).toBe(200);
    expect((await s.post("/dashboard/keys/delete", { key: testKey.id, confirm: "yes" })).kind).toBe("ok");
    expect((await api(server, "GET", `/v1/orgs/${owner.orgId}/usage`, { key: testKey.key })).body.error.code).toBe("INVALID_KEY");
    const made = await s.post("/dashboard/keys", { type: "secret", mode: "live", scopes: ["sessions", "billing"] });
    expect([made.kind, made.secret]).toEqual(["ok", expect.stringMatching(/^fs_live_/)]);
    // A scopeless key's session manages a scopeless key and itself (a roll of its own key is no stronger than it).
    const w = await session(weak.key);
    const other = await newKey(owner.orgId, { type: "secret" });
    expect((await w.post("/dashboard/keys/disable", { key: other.id, confirm: "yes" })).kind).toBe("ok");
    const own = await w.post("/dashboard/keys/roll", { key: weak.id, confirm: "yes", grace_seconds: "3600" });
    expect([own.kind, own.secret]).toEqual(["ok", expect.stringMatching(/^fs_live_/)]);
    // A test key's session manages the test keys.
    const t = await session((await newKey(owner.orgId, { type: "secret", mode: "test" })).key);
    const t2 = await newKey(owner.orgId, { type: "secret", mode: "test" });
    const testRolled = await t.post("/dashboard/keys/roll", { key: t2.id, confirm: "yes", grace_seconds: "0" });
    expect([testRolled.kind, testRolled.secret]).toEqual(["ok", expect.stringMatching(/^fs_test_/)]);
  });
});
