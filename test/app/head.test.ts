import { beforeAll, describe, expect, it } from "vitest";
import type { HandlerWrap, Need } from "../../src/http/pipeline.js";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 38: HEAD on every GET route without a key and on every page (the static pages and the
 * dashboard's) answers as its GET does (status, content type, the length of the body) without
 * the body, in-process. The table is what was mounted (HandlerWrap sees every route and dashboard
 * page), so a new one is covered when it exists. test/integration/pages.head.test.ts does the same
 * on the real uWS. Before, the dashboard's pages answered HEAD with a 404 page.
 */

const mounted: Array<{ label: string; need: Need }> = [];
const wrap: HandlerWrap = (label, fn, need) => {
  mounted.push({ label, need });
  return fn;
};

let server!: TestApp;
useApp((s) => (server = s), { FS_DEMO: "true" }, { wrap });

let cookie = "";
let key = "";
let orgId = "";
beforeAll(async () => {
  const org = await createOrgWithKey(server, "pro", ["sessions", "billing"]);
  key = org.key;
  orgId = org.orgId;
  const res = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key: org.key }).toString(),
    redirect: "manual",
  });
  expect(res.status).toBe(303);
  cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
});

const pathOf = (pattern: string): string => pattern.replace(/:[A-Za-z]+/g, "x1");

/** GET and HEAD of a path; HEAD must answer GET's status and headers, without a body. */
async function compare(path: string, headers: Record<string, string> = {}, sameLength = true): Promise<number> {
  const get = await server.fetch(`${server.url}${path}`, { headers, redirect: "manual" });
  const body = Buffer.from(await get.arrayBuffer());
  const head = await server.fetch(`${server.url}${path}`, { method: "HEAD", headers, redirect: "manual" });
  expect(head.status, `HEAD ${path}`).toBe(get.status);
  expect(await head.text(), `HEAD ${path}`).toBe("");
  if (get.status === 200) {
    expect(head.headers.get("content-type"), `HEAD ${path}`).toBe(get.headers.get("content-type"));
    const length = head.headers.get("content-length");
    // An envelope's length moves with its processing_time_ms (a digit or two); other bodies are the same bytes.
    if (sameLength && get.headers.get("content-encoding") === null && length !== null) {
      if (get.headers.get("content-type") === "application/json")
        expect(Math.abs(Number(length) - body.length), `HEAD ${path}: ${length} vs ${body.length}`).toBeLessThanOrEqual(4);
      else expect(length, `HEAD ${path}`).toBe(String(body.length));
    }
  }
  if (get.status === 303) expect(head.headers.get("location"), `HEAD ${path}`).toBe(get.headers.get("location"));
  return get.status;
}

describe("HEAD on every GET route and page, in-process", () => {
  it("answers each unauthenticated GET route's HEAD as its GET, without the body", async () => {
    const routes = mounted.filter((e) => e.need.kind === "none" && e.label.startsWith("GET "));
    expect(routes.map((e) => e.label)).toEqual(expect.arrayContaining(["GET /healthz", "GET /readyz"]));
    for (const e of routes) await compare(pathOf(e.label.slice(4)));
  });

  it("answers each keyed GET route's HEAD as its GET (its key, capability and inputs checked the same), without the body", async () => {
    const routes = mounted.filter((e) => (e.need.kind === "secret" || e.need.kind === "admin") && e.label.startsWith("GET "));
    expect(routes.length).toBeGreaterThan(15);
    const statuses: number[] = [];
    for (const e of routes) {
      const path = e.label.slice(4).replace(":orgId", orgId);
      const token = e.need.kind === "admin" ? ADMIN_TOKEN : key;
      // /metrics counts this very request: its text is longer on each call.
      statuses.push(await compare(pathOf(path), { authorization: `Bearer ${token}` }, path !== "/metrics"));
      // Without a key: refused the same way (401), by the pipeline.
      expect(await compare(pathOf(path)), `${e.label} without a key`).toBe(401);
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(8);
  });

  it("checks a metered route's HEAD as its GET but neither runs nor charges it", async () => {
    const usage = async () => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used as number;
    const before = await usage();
    const head = await server.fetch(`${server.url}/v1/ip/8.8.8.8`, { method: "HEAD", headers: { authorization: `Bearer ${key}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const bad = await server.fetch(`${server.url}/v1/ip/not-an-ip`, { method: "HEAD", headers: { authorization: `Bearer ${key}` } });
    expect(bad.status).toBe(400);
    expect(await usage()).toBe(before);
    // The GET of the same lookup is charged: the HEAD's free answer is not the usage reader's.
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
    expect(await usage()).toBeGreaterThan(before);
  });

  it("answers the static pages' HEAD as their GET", async () => {
    for (const path of ["/favicon.ico", "/billing/success", "/billing/canceled", "/demo", "/js/fs.js"]) expect(await compare(path), path).toBe(200);
  });

  it("answers every dashboard page's HEAD as its GET, signed out (sent to sign in) and signed in", async () => {
    const pages = mounted.filter((e) => e.need.kind === "session" && e.label.startsWith("GET ")).map((e) => e.label.slice(4));
    expect(pages.length).toBeGreaterThan(8);
    for (const path of pages) expect(await compare(path), `${path} signed out`).toBe(303);
    // Signed in: the status of its GET whatever it is (a page without its query answers 400 or 404).
    const statuses = [];
    for (const path of pages) statuses.push(await compare(path, { cookie }));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(pages.length / 2);
    expect(await compare("/dashboard", { cookie })).toBe(200);
    for (const path of ["/dashboard/login", "/dashboard/style.css"]) expect(await compare(path), path).toBe(200);
    expect(await compare("/dashboard/")).toBe(303);
  });
});
