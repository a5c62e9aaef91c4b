import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { verifyWebhook } from "@fraudscore/client";
import { useApp, type TestApp } from "../helpers/app.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { admin, api, createBeaconProject, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
// Retries after 200 ms then 400 ms, so a retry is seen quickly; http to the local receiver.
// Private addresses too: the receiver listens on 127.0.0.1.
useApp((s) => (server = s), {
  FS_WEBHOOK_ALLOW_HTTP: "true",
  FS_WEBHOOK_ALLOW_PRIVATE: "true",
  FS_WEBHOOK_BACKOFF_MS: "200,400",
  FS_WEBHOOK_POLL_MS: "100",
  FS_WEBHOOK_ENDPOINTS_MAX: "3",
});

const receiver = new WebhookReceiver();
beforeAll(async () => {
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
});

/** Registers an endpoint on the receiver for `events` (admin token) and points the receiver at its secret. */
async function register(orgId: string, events: string[], url = receiver.url): Promise<{ id: string; secret: string }> {
  const r = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url, events });
  expect(r.status).toBe(201);
  return r.body.data;
}

/** The attempts of the endpoint's log, newest first. */
async function deliveries(orgId: string, id: string): Promise<Array<Record<string, any>>> {
  const r = await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks/${id}/deliveries`);
  expect(r.status).toBe(200);
  return r.body.data.items;
}

describe("webhook endpoints API", () => {
  it("creates (secret shown once), lists, gets, changes and deletes an endpoint", async () => {
    const { orgId } = await createOrgWithKey(server);
    const made = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url: "https://example.com/hook", events: ["key.created"] });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({
      org_id: orgId,
      url: "https://example.com/hook",
      events: ["key.created"],
      enabled: true,
      pending: 0,
      previous_secret_expires_at: null,
    });
    expect(made.body.data.id).toMatch(/^we_/);
    expect(made.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const id = made.body.data.id;
    const listed = await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`);
    expect(listed.body.data.items).toHaveLength(1);
    expect(listed.body.data.items[0].secret).toBeUndefined();
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks/${id}`)).body.data.secret).toBeUndefined();
    const changed = await admin(server, "PATCH", `/v1/admin/orgs/${orgId}/webhooks/${id}`, { events: ["key.created", "key.disabled"], enabled: false });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ events: ["key.created", "key.disabled"], enabled: false });
    const gone = await admin(server, "DELETE", `/v1/admin/orgs/${orgId}/webhooks/${id}`);
    expect(gone.body.data).toEqual({ id, deleted: true });
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks/${id}`)).status).toBe(404);
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`)).body.data.items).toEqual([]);
  });

  it("refuses bad input with VALIDATION_ERROR and bounds the endpoints per org (409 LIMIT_EXCEEDED)", async () => {
    const { orgId } = await createOrgWithKey(server);
    const bad = async (body: unknown) => (await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, body)).body.error;
    expect(await bad({ url: "ftp://example.com/x", events: ["key.created"] })).toMatchObject({ code: "VALIDATION_ERROR", param: "body.url" });
    expect(await bad({ url: "https://user:pw@example.com/x", events: ["key.created"] })).toMatchObject({ code: "VALIDATION_ERROR", param: "body.url" });
    expect(await bad({ url: "https://example.com/x", events: ["nope"] })).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await bad({ url: "https://example.com/x", events: [] })).toMatchObject({ code: "VALIDATION_ERROR", param: "body.events" });
    for (let i = 0; i < 3; i++) await register(orgId, ["key.created"], `https://example.com/${i}`);
    expect(await bad({ url: "https://example.com/4", events: ["key.created"] })).toMatchObject({
      code: "LIMIT_EXCEEDED",
      message: expect.stringContaining("FS_WEBHOOK_ENDPOINTS_MAX"),
    });
    expect((await admin(server, "POST", "/v1/admin/orgs/org_nope/webhooks", { url: "https://example.com/x", events: ["key.created"] })).status).toBe(404);
  });

  it("serves the org's own secret key under /v1/orgs/{orgId}/webhooks, and 404 for another org", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const other = await createOrgWithKey(server);
    const made = await api(server, "POST", "/v1/orgs/me/webhooks", { key, body: { url: "https://example.com/mine", events: ["key.disabled"] } });
    expect(made.status).toBe(201);
    expect(made.body.data.org_id).toBe(orgId);
    expect((await api(server, "GET", `/v1/orgs/${orgId}/webhooks`, { key })).body.data.items).toHaveLength(1);
    expect((await api(server, "GET", `/v1/orgs/${orgId}/webhooks`, { key: other.key })).status).toBe(404);
    expect((await api(server, "GET", `/v1/orgs/${other.orgId}/webhooks/${made.body.data.id}`, { key: other.key })).status).toBe(404);
    expect((await api(server, "DELETE", `/v1/orgs/me/webhooks/${made.body.data.id}`, { key: other.key })).status).toBe(404);
  });
});

describe("webhook delivery", () => {
  it("delivers key.created signed (standardwebhooks verifies it), retries after a 500 with the same webhook-id, never twice after a 2xx", async () => {
    const { orgId } = await createOrgWithKey(server);
    const endpoint = await register(orgId, ["key.created", "key.disabled"]);
    receiver.secret = endpoint.secret;
    // The first attempt of each message is answered 500, the next ones 200.
    const seen = new Set<string>();
    receiver.answer = (r) => (seen.has(r.id) ? 200 : (seen.add(r.id), 500));
    const made = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", name: "hooked" });
    expect(made.status).toBe(201);
    const mine = () => receiver.received.filter((r) => r.verified?.data.org_id === orgId || r.body.includes(orgId));
    await expect.poll(() => mine().filter((r) => r.status === 200).length, { timeout: 15_000 }).toBe(1);
    const [first, second] = mine();
    expect(first!.status).toBe(500);
    expect(second!.id).toBe(first!.id);
    expect(second!.id).toMatch(/^msg_/);
    expect(second!.verified).toMatchObject({
      type: "key.created",
      data: { key_id: made.body.data.id, org_id: orgId, name: "hooked", type: "secret", livemode: true },
    });
    const log = await deliveries(orgId, endpoint.id);
    expect(log.map((a) => [a.webhook_id, a.status, a.outcome])).toEqual([
      [first!.id, 200, "delivered"],
      [first!.id, 500, "retry"],
    ]);
    // Then in commit order: the disable after the creation; the created message is never sent again.
    await admin(server, "POST", `/v1/admin/keys/${made.body.data.id}/disable`);
    await expect.poll(() => mine().filter((r) => r.status === 200).length, { timeout: 15_000 }).toBe(2);
    const delivered = mine().filter((r) => r.status === 200);
    expect(delivered.map((r) => r.verified?.type)).toEqual(["key.created", "key.disabled"]);
    expect(receiver.delivered(first!.id)).toHaveLength(1);
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks/${endpoint.id}`)).body.data.pending).toBe(0);
  });

  it("signs with the old and the new secret after a roll, until the grace ends", async () => {
    const { orgId } = await createOrgWithKey(server);
    const endpoint = await register(orgId, ["key.created"]);
    receiver.answer = () => 200;
    const rolled = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks/${endpoint.id}/roll-secret`, { grace_seconds: 600 });
    expect(rolled.status).toBe(201);
    expect(rolled.body.data.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rolled.body.data.previous_secret_expires_at)).toBeGreaterThan(Date.now());
    receiver.secret = rolled.body.data.secret;
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    await expect.poll(() => receiver.received.find((r) => r.body.includes(orgId)), { timeout: 15_000 }).toBeDefined();
    const got = receiver.received.find((r) => r.body.includes(orgId))!;
    expect(got.signature.split(" ")).toHaveLength(2);
    expect(got.verified).not.toBeNull();
    const headers = { "webhook-id": got.id, "webhook-timestamp": got.timestamp, "webhook-signature": got.signature };
    expect(() => new Webhook(endpoint.secret).verify(got.body, headers)).not.toThrow();
    // The client package's helper verifies it too, with either secret.
    expect(verifyWebhook(rolled.body.data.secret, got.body, headers).type).toBe("key.created");
    expect(verifyWebhook(endpoint.secret, got.body, new Headers(headers)).data.org_id).toBe(orgId);
    expect(() => verifyWebhook(endpoint.secret, got.body.replace("key.created", "key.disabled"), headers)).toThrow();
  });

  it("sends nothing to a disabled endpoint or for events it did not choose", async () => {
    const { orgId, keyId } = await createOrgWithKey(server);
    const off = await register(orgId, ["key.created"]);
    await admin(server, "PATCH", `/v1/admin/orgs/${orgId}/webhooks/${off.id}`, { enabled: false });
    const other = await register(orgId, ["key.disabled"]);
    receiver.secret = other.secret;
    receiver.answer = () => 200;
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`);
    await expect.poll(() => receiver.received.filter((r) => r.body.includes(orgId)).length, { timeout: 15_000 }).toBe(1);
    expect(receiver.received.find((r) => r.body.includes(orgId))!.verified?.type).toBe("key.disabled");
    expect(await deliveries(orgId, off.id)).toEqual([]);
  });

  it("announces a plan change (admin PATCH of the org) as plan.changed", async () => {
    const { orgId } = await createOrgWithKey(server);
    const endpoint = await register(orgId, ["plan.changed", "subscription.changed"]);
    receiver.secret = endpoint.secret;
    receiver.answer = () => 200;
    expect((await admin(server, "PATCH", `/v1/admin/orgs/${orgId}`, { plan: "pro" })).status).toBe(200);
    await expect
      .poll(() => receiver.received.find((r) => r.body.includes(orgId))?.verified, { timeout: 15_000 })
      .toMatchObject({ type: "plan.changed", data: { org_id: orgId, plan: "pro", previous_plan: "free", livemode: true } });
  });

  it("announces 80% and 100% of the quota once each per period", async () => {
    const { orgId } = await createOrgWithKey(server);
    const endpoint = await register(orgId, ["quota.80_percent", "quota.100_percent"]);
    receiver.secret = endpoint.secret;
    receiver.answer = () => 200;
    const adjust = async (credits: number) =>
      expect((await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits, reason: "test" })).status).toBe(200);
    await adjust(7_999);
    await adjust(1); // 8,000 of 10,000
    await expect
      .poll(() => receiver.received.filter((r) => r.body.includes(orgId)).map((r) => r.verified?.type), { timeout: 15_000 })
      .toEqual(["quota.80_percent"]);
    await adjust(-500);
    await adjust(600); // 80% again in the same period: not announced again
    await adjust(2_000); // past 100%
    await expect
      .poll(() => receiver.received.filter((r) => r.body.includes(orgId)).map((r) => r.verified?.type), { timeout: 15_000 })
      .toEqual(["quota.80_percent", "quota.100_percent"]);
    expect(receiver.received.find((r) => r.verified?.type === "quota.100_percent" && r.body.includes(orgId))!.verified!.data).toMatchObject({
      org_id: orgId,
      quota: 10_000,
      percent: 100,
      livemode: true,
    });
  });
});

describe("block events", () => {
  /**
   * A beacon project whose bot policy blocks non-browser clients, a session of it, and a hit that
   * is blocked; with `mode: "test"`, through a test publishable key (fs_pub_test_…).
   */
  async function blockingProject(mode: "live" | "test" = "live") {
    const p = await createBeaconProject(server);
    if (mode === "test") {
      const made = await admin(server, "POST", `/v1/admin/orgs/${p.orgId}/keys`, { type: "publishable", project_id: p.projectId, mode: "test" });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      p.publishableKey = made.body.data.key;
    }
    const put = await api(server, "PUT", `/v1/projects/${p.projectId}/bot-policy`, {
      key: p.secretKey,
      body: { kinds: { client: "block" }, allow_unverified: true },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const h = await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: {} });
    expect(h.status).toBe(200);
    const sessionId: string = h.body.data.session_id;
    const blockedHit = async () => {
      const r = await api(server, "POST", "/v1/collect", {
        key: p.publishableKey,
        body: { action: "pageview", token: h.body.data.token, session_id: sessionId, page: "/" },
        headers: { "user-agent": "lua-resty-http/0.16.1 (Lua) ngx_lua/10019" },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    return { ...p, sessionId, blockedHit };
  }

  /** The endpoint as the API shows it (its `pending` count: entries waiting in its outbox). */
  async function endpointOf(orgId: string, id: string): Promise<Record<string, any>> {
    return (await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks/${id}`)).body.data;
  }

  it("announces a session judged block once, with its reasons (signed); a second blocked hit of the session adds nothing", async () => {
    const p = await blockingProject();
    const endpoint = await register(p.orgId, ["session.blocked"]);
    receiver.secret = endpoint.secret;
    receiver.answer = () => 200;
    await p.blockedHit();
    const mine = () => receiver.received.filter((r) => r.body.includes(p.sessionId));
    await expect.poll(() => mine().map((r) => r.verified?.type), { timeout: 15_000 }).toEqual(["session.blocked"]);
    expect(mine()[0]!.verified!.data).toMatchObject({ org_id: p.orgId, project_id: p.projectId, session_id: p.sessionId, livemode: true });
    expect(mine()[0]!.verified!.data.reasons).toContain("ua_client:runtime");
    await expect.poll(async () => (await endpointOf(p.orgId, endpoint.id)).pending, { timeout: 15_000 }).toBe(0);
    // The answer of a blocked hit comes after its event is stored: nothing waits after the second one.
    await p.blockedHit();
    expect((await endpointOf(p.orgId, endpoint.id)).pending).toBe(0);
    expect(await deliveries(p.orgId, endpoint.id)).toHaveLength(1);
    expect(mine()).toHaveLength(1);
  });

  it("announces an account judged block by the auth pre-flight once per account", async () => {
    const { orgId } = await createOrgWithKey(server);
    const made = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions"] });
    expect(made.status).toBe(201);
    const endpoint = await register(orgId, ["account.blocked"]);
    receiver.secret = endpoint.secret;
    receiver.answer = () => 200;
    const account = `user_${Math.random().toString(36).slice(2)}`;
    const check = async () => {
      // The documented magic address: a test key always judges it block.
      const r = await api(server, "POST", "/v1/auth/check", {
        key: made.body.data.key,
        body: { observation_type: "auth.login", email: "a@block.fraudscore.test", external_user_id: account },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.verdict.decision).toBe("block");
    };
    await check();
    const mine = () => receiver.received.filter((r) => r.body.includes(account));
    await expect.poll(() => mine().map((r) => r.verified?.type), { timeout: 15_000 }).toEqual(["account.blocked"]);
    // The test key's event says so, as Stripe's do.
    expect(mine()[0]!.verified!.data).toMatchObject({ org_id: orgId, account_id: account, livemode: false });
    await check();
    expect((await endpointOf(orgId, endpoint.id)).pending).toBe(0);
    expect(mine()).toHaveLength(1);
  });

  it("marks the events of a test key livemode: false (a test publishable key's blocked session, a test key created and disabled)", async () => {
    const p = await blockingProject("test");
    expect(p.publishableKey).toMatch(/^fs_pub_test_/);
    const endpoint = await register(p.orgId, ["session.blocked", "key.created", "key.disabled"]);
    receiver.secret = endpoint.secret;
    receiver.answer = () => 200;
    await p.blockedHit();
    const mine = () => receiver.received.filter((r) => r.body.includes(p.orgId) && r.status === 200).map((r) => r.verified);
    await expect.poll(() => mine().map((v) => v?.type), { timeout: 15_000 }).toEqual(["session.blocked"]);
    expect(mine()[0]!.data).toMatchObject({ session_id: p.sessionId, livemode: false });
    const made = await admin(server, "POST", `/v1/admin/orgs/${p.orgId}/keys`, { type: "secret", mode: "test" });
    expect(made.body.data.key).toMatch(/^fs_test_/);
    await admin(server, "POST", `/v1/admin/keys/${made.body.data.id}/disable`);
    await expect.poll(() => mine().map((v) => v?.type), { timeout: 15_000 }).toEqual(["session.blocked", "key.created", "key.disabled"]);
    expect(mine().map((v) => v!.data.livemode)).toEqual([false, false, false]);
  });

  it("writes nothing for an org without an endpoint subscribed to the event", async () => {
    const p = await blockingProject();
    const endpoint = await register(p.orgId, ["plan.changed"]);
    await p.blockedHit();
    expect((await endpointOf(p.orgId, endpoint.id)).pending).toBe(0);
    expect(await deliveries(p.orgId, endpoint.id)).toEqual([]);
  });
});

describe("the dashboard's Webhooks page", () => {
  /** A signed-in browser: its session cookie, and GET/POST of dashboard pages. */
  async function browser(key: string) {
    const login = await server.fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({ key }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const get = async (path: string) => {
      const res = await server.fetch(`${server.url}${path}`, { headers: { cookie } });
      return { status: res.status, text: await res.text() };
    };
    const post = async (path: string, fields: URLSearchParams) => {
      const csrf = /name="csrf" value="([^"]+)"/.exec((await get("/dashboard/webhooks")).text)![1]!;
      fields.set("csrf", csrf);
      const res = await server.fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
        body: fields.toString(),
        redirect: "manual",
      });
      expect(res.status).toBe(303);
      return get(res.headers.get("location")!);
    };
    return { get, post };
  }

  it("adds an endpoint (its secret shown once), shows its delivery log with the answer codes, rolls its secret and deletes it", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const b = await browser(key);
    expect((await b.get("/dashboard/webhooks")).text).toContain("New endpoint");
    const fields = new URLSearchParams({ url: receiver.url });
    fields.append("events", "key.created");
    const added = await b.post("/dashboard/webhooks", fields);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(added.text)?.[0];
    expect(secret).toBeDefined();
    const id = /we_[0-9A-Za-z]{16}/.exec(added.text)![0];
    receiver.secret = secret!;
    receiver.answer = () => 202;
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    await expect
      .poll(async () => (await b.get(`/dashboard/webhooks?endpoint=${id}`)).text, { timeout: 15_000 })
      .toMatch(/<td>202<\/td><td>—<\/td><td>delivered<\/td>/);
    const rolled = await b.post("/dashboard/webhooks/roll", new URLSearchParams({ endpoint: id }));
    expect(rolled.text).toContain("old secret signs until");
    expect(/whsec_[A-Za-z0-9+/=]+/.exec(rolled.text)?.[0]).not.toBe(secret);
    const deleted = await b.post("/dashboard/webhooks/delete", new URLSearchParams({ endpoint: id }));
    expect(deleted.text).toContain(`Endpoint ${id} is deleted`);
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`)).body.data.items).toEqual([]);
  });
});
