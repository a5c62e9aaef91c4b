import { beforeAll, describe, expect, it } from "vitest";
import type { HandlerWrap, Need } from "../../src/http/pipeline.js";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 38, "one capability model": every route of the routing table and every page and action of
 * the dashboard declares what its caller needs (a route's `auth`, a dashboard entry's `need`), and
 * a caller without it is refused before any of the handler's code runs. The app is mounted with
 * every handler (route handler, dashboard page or action function) wrapped by one that records
 * being called; the table comes from what was mounted, so a new route or action is covered as
 * soon as it exists.
 */

interface Entry {
  label: string;
  need: Need;
}
const mounted: Entry[] = [];
const called = new Set<string>();
const wrap: HandlerWrap = (label, fn, need) => {
  mounted.push({ label, need });
  return ((...args: unknown[]) => {
    called.add(label);
    return fn(...args);
  }) as typeof fn;
};

let server!: TestApp;
useApp((s) => (server = s), {}, { wrap });

/** Callers, each lacking something. */
let scopeless = ""; // a live secret key without scopes
let testKey = ""; // a test-mode secret key with every scope
let scopelessSession = { cookie: "", csrf: "" };
let testSession = { cookie: "", csrf: "" };

async function signIn(key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  expect(res.status, await res.text()).toBe(303);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const page = await (await server.fetch(`${server.url}/dashboard`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
  expect(csrf, page).not.toBe("");
  return { cookie, csrf };
}

beforeAll(async () => {
  const org = await createOrgWithKey(server, "pro");
  scopeless = org.key;
  const test = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions", "billing"] });
  expect(test.status, JSON.stringify(test.body)).toBe(201);
  testKey = test.body.data.key;
  scopelessSession = await signIn(scopeless);
  testSession = await signIn(testKey);
});

/** A path for a pattern: each parameter a value of a plausible shape (checked after the caller anyway). */
const pathOf = (pattern: string): string => pattern.replace(/:[A-Za-z]+/g, "x1");

/** Calls an API route as `key` (none: no Authorization); its status and error code. */
async function callApi(label: string, key: string | null): Promise<{ status: number; code: string | undefined }> {
  const [method, pattern] = label.split(" ") as [string, string];
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const withBody = method !== "GET" && method !== "DELETE";
  if (withBody) headers["content-type"] = "application/json";
  const res = await server.fetch(`${server.url}${pathOf(pattern)}`, { method, headers, body: withBody ? "{}" : undefined, redirect: "manual" });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code };
}

/** Calls a dashboard page or action as the session (none: no cookie); its status. */
async function callDashboard(
  label: string,
  session: { cookie: string; csrf: string } | null,
): Promise<{ status: number; location: string | null; text: string }> {
  const [method, path] = label.split(" ") as [string, string];
  const headers: Record<string, string> = { origin: server.url };
  if (session) headers.cookie = session.cookie;
  let body: string | undefined;
  if (method === "POST") {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams({ csrf: session?.csrf ?? "", plan: "pro", project: "prj_x", key_id: "key_x", request_id: "req_x", label: "spam" }).toString();
  }
  const res = await server.fetch(`${server.url}${path}`, { method, headers, body, redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

/** The refusals a caller lacking part of `need` must get, as [who, expected status, expected code]. */
function apiRefusals(need: Need): Array<[string, string | null, number, string]> {
  switch (need.kind) {
    case "none":
      return [];
    case "admin":
      return [
        ["no key", null, 401, "MISSING_KEY"],
        ["a secret key", scopeless, 401, "INVALID_KEY"],
      ];
    case "publishable":
      return [
        ["no key", null, 401, "MISSING_KEY"],
        ["a secret key", scopeless, 403, "KEY_TYPE_NOT_ALLOWED"],
      ];
    case "secret": {
      const out: Array<[string, string | null, number, string]> = [["no key", null, 401, "MISSING_KEY"]];
      if (need.scope) out.push([`a key without the ${need.scope} scope`, scopeless, 403, "INSUFFICIENT_SCOPE"]);
      if (need.live) out.push(["a test key with every scope", testKey, 403, "INSUFFICIENT_SCOPE"]);
      return out;
    }
    case "session":
      throw new Error("not an API route");
  }
}

describe("every route and dashboard entry declares its capability, refused before its handler", () => {
  it("mounted the whole table, each entry with a declared need", () => {
    const routes = mounted.filter((e) => e.need.kind !== "session");
    const dashboard = mounted.filter((e) => e.need.kind === "session");
    expect(routes.length).toBeGreaterThan(60);
    expect(dashboard.length).toBeGreaterThan(20);
    for (const e of mounted) expect(["none", "admin", "secret", "publishable", "session"], e.label).toContain(e.need.kind);
    // The billing actions need the billing scope and a live key, as their API routes do.
    expect(dashboard.find((e) => e.label === "POST /dashboard/billing/checkout")?.need).toEqual({ kind: "session", scope: "billing", live: true });
    expect(routes.find((e) => e.label === "POST /v1/orgs/:orgId/billing/checkout")?.need).toEqual({ kind: "secret", scope: "billing", live: true });
    // What live traffic uses is changed by live keys only: a test key's change would reach it.
    for (const label of [
      "PUT /v1/projects/:projectId/bot-policy",
      "PUT /v1/orgs/:orgId/check-history",
      "POST /v1/orgs/:orgId/webhooks",
      "PATCH /v1/orgs/:orgId/webhooks/:webhookId",
      "DELETE /v1/orgs/:orgId/webhooks/:webhookId",
      "POST /v1/orgs/:orgId/webhooks/:webhookId/roll-secret",
    ]) {
      expect(routes.find((e) => e.label === label)?.need, label).toEqual({ kind: "secret", live: true });
    }
  });

  it("API routes: a caller without the route's need gets 401 / 403, and the handler never runs", async () => {
    let checked = 0;
    for (const e of mounted.filter((m) => m.need.kind !== "session")) {
      for (const [who, key, status, code] of apiRefusals(e.need)) {
        called.delete(e.label);
        const r = await callApi(e.label, key);
        expect({ status: r.status, code: r.code }, `${e.label} as ${who}`).toEqual({ status, code });
        expect(called.has(e.label), `${e.label} ran its handler for ${who}`).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(60);
  });

  it("dashboard pages and actions: signed out is sent to sign in, a session without the need gets 403, and the page or action never runs", async () => {
    let refused = 0;
    for (const e of mounted.filter((m) => m.need.kind === "session")) {
      const need = e.need as Extract<Need, { kind: "session" }>;
      called.delete(e.label);
      const out = await callDashboard(e.label, null);
      expect(out.status, `${e.label} signed out`).toBe(303);
      expect(out.location, e.label).toMatch(/^\/dashboard\/login/);
      const lacking: Array<[string, { cookie: string; csrf: string }]> = [];
      if (need.scope) lacking.push([`a session without the ${need.scope} scope`, scopelessSession]);
      if (need.live) lacking.push(["a test-key session", testSession]);
      for (const [who, session] of lacking) {
        const r = await callDashboard(e.label, session);
        expect(r.status, `${e.label} as ${who}: ${r.text.slice(0, 300)}`).toBe(403);
        refused++;
      }
      expect(called.has(e.label), `${e.label} ran`).toBe(false);
    }
    expect(refused).toBeGreaterThanOrEqual(3);
  });
});
