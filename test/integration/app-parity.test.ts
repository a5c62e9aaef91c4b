import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, startServer, type TestServer } from "./helpers/server.js";

/**
 * The in-process app (test/helpers/app.ts, uWS replaced by test/helpers/fake-uws.ts) answers as
 * the real server does: the same requests to both give the same status, headers that matter and
 * body (request ids and timings aside). Tests in test/app/ rely on it.
 */
let server: TestServer | undefined;
let app: TestApp | undefined;

beforeAll(async () => {
  [server, app] = await Promise.all([startServer(), startApp()]);
});

afterAll(async () => {
  await Promise.all([server?.stop(), app?.stop()]);
  server?.cleanup();
  app?.cleanup();
});

/** Headers compared (uWS adds Date and its own name; content-length follows the body). */
const COMPARED = /^(content-type|allow|retry-after|vary|location|cache-control|etag|www-authenticate|access-control-.*|ratelimit.*|set-cookie)$/;

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Who sends it: the demo account's keys differ between the two, so they are filled in per target. */
  key?: "secret" | "publishable" | "admin";
}

const PROBES: Probe[] = [
  { method: "GET", path: "/healthz" },
  { method: "HEAD", path: "/healthz" },
  { method: "GET", path: "/readyz", key: "admin" },
  { method: "GET", path: "/no/such/path" },
  { method: "POST", path: "/healthz" },
  { method: "DELETE", path: "/v1/ip/8.8.8.8" },
  { method: "GET", path: "/healthz/" },
  { method: "OPTIONS", path: "/v1/collect", headers: { origin: "https://shop.example" } },
  { method: "GET", path: "/v1/ip/8.8.8.8" },
  { method: "GET", path: "/v1/ip/8.8.8.8", headers: { authorization: "Bearer nope" } },
  { method: "GET", path: "/v1/ip/8.8.8.8", key: "publishable" },
  { method: "GET", path: "/v1/ip/8.8.8.8?fields=network", key: "secret" },
  { method: "GET", path: "/v1/ip/not-an-ip", key: "secret" },
  { method: "GET", path: "/v1/ip/2001:db8::1", key: "secret" },
  { method: "GET", path: "/v1/ip/1.1.1.1?x=%ZZ", key: "secret" },
  { method: "POST", path: "/v1/admin/orgs", key: "admin", headers: { "content-type": "application/json" }, body: "{not json" },
  { method: "POST", path: "/v1/admin/orgs", key: "admin", headers: { "content-type": "text/plain" }, body: "{}" },
  { method: "POST", path: "/v1/admin/orgs", key: "admin", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x".repeat(70_000) }) },
  { method: "POST", path: "/v1/admin/orgs", key: "admin", headers: { "content-type": "application/json" }, body: JSON.stringify({ plan: "gold" }) },
  {
    method: "POST",
    path: "/v1/email",
    key: "secret",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "maria@example-shop.com" }),
  },
  { method: "POST", path: "/v1/collect", key: "publishable", headers: { "content-type": "application/json" }, body: "{}" },
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/js/fs.js" },
  { method: "HEAD", path: "/js/fs.js" },
  { method: "GET", path: "/" },
  { method: "GET", path: "/favicon.ico" },
  { method: "GET", path: "/billing/success" },
  { method: "GET", path: "/dashboard/login" },
  { method: "GET", path: "/dashboard" },
  { method: "POST", path: "/dashboard/login", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "key=fs_live_wrong" },
];

type Target = { url: string; demo: TestServer["demo"]; fetch: (url: string, init?: RequestInit) => Promise<Response> };

async function send(target: Target, p: Probe): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers: Record<string, string> = { ...p.headers };
  if (p.key) headers.authorization = `Bearer ${p.key === "admin" ? ADMIN_TOKEN : p.key === "secret" ? target.demo.secretKey : target.demo.publishableKey}`;
  const res = await target.fetch(target.url + p.path, { method: p.method, headers, body: p.body });
  const kept: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    // RateLimit's t (seconds to the reset) moves on if the two requests straddle a second.
    if (COMPARED.test(k)) kept[k] = v.replaceAll(target.url, "BASE").replace(/;t=\d+/, ";t=*");
  });
  return { status: res.status, headers: kept, body: normalise(await res.text(), target) };
}

/**
 * Request ids, timings, seconds to the period's reset and the demo account's ids and keys differ
 * between the two; the rest must not.
 */
function normalise(body: string, target: Target): string {
  let out = body
    .replace(/"(request_id|processing_time_ms|id|key_id|created_at|rss_bytes|reset_in_seconds)":("[^"]*"|[0-9.]+)/g, '"$1":"*"')
    .replace(/req_[A-Za-z0-9]+_[a-z0-9]+/g, "req_*")
    .replace(/"(obs|s)_[A-Za-z0-9]+"/g, '"$1_*"')
    .replaceAll(target.url, "BASE");
  for (const v of Object.values(target.demo)) out = out.replaceAll(v, "DEMO");
  return out;
}

describe("the in-process app answers as the server", () => {
  it("for every probe: status, headers that matter, body", async () => {
    const real: Target = { url: server!.url, demo: server!.demo, fetch: (u, i) => fetch(u, i) };
    const fake: Target = { url: app!.url, demo: app!.demo, fetch: (u, i) => app!.fetch(u, i) };
    const differ: string[] = [];
    for (const p of PROBES) {
      const [a, b] = [await send(real, p), await send(fake, p)];
      if (JSON.stringify(a) !== JSON.stringify(b)) differ.push(`${p.method} ${p.path}\n  server: ${JSON.stringify(a)}\n  app:    ${JSON.stringify(b)}`);
    }
    expect(differ.join("\n")).toBe("");
  });
});
