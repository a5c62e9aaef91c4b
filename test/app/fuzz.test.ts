import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api } from "../integration/helpers/server.js";
import { scaled } from "../helpers/time.js";

/**
 * Property-based fuzzing of every route in the service's own OpenAPI document: random path
 * parameters, query strings, credentials, content types and bodies (arbitrary JSON, non-JSON text,
 * and each route's documented example with fields replaced, removed or added). Every answer must
 * be in the envelope and match the document (api() checks it), and no call may end in a server
 * error: the only 5xx allowed are the documented "not live yet" (501) and "billing not configured"
 * (503) answers of this installation. A few thousand calls per run, seeded for replay.
 */
let server!: TestApp;
useApp((s) => (server = s));

const RUNS_PER_ROUTE = 60;
const ALLOWED_5XX = new Set(["NOT_IMPLEMENTED", "BILLING_NOT_CONFIGURED"]);

interface Operation {
  method: string;
  path: string;
  example: unknown;
  /** The security scheme the operation takes (secretKey, publishableKey, adminToken), if any. */
  scheme: string | undefined;
}

/** Every operation of the served document, with its example body when it has one. */
async function operations(): Promise<Operation[]> {
  const doc = (await (await server.fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { tags?: string[]; requestBody?: { content?: Record<string, { example?: unknown }> }; security?: Array<Record<string, unknown>> }>>;
  };
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    // Not envelopes: the document itself, and the Prometheus text (test/app/metrics.test.ts).
    if (path === "/openapi.json" || path === "/metrics") continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      // Not the API: the beacon script, the icon and the pages (tag pages) answer no envelope.
      if (op.tags?.includes("pages")) continue;
      const example = op.requestBody?.content?.["application/json"]?.example;
      out.push({ method: method.toUpperCase(), path, example, scheme: Object.keys(op.security?.[0] ?? {})[0] });
    }
  }
  return out;
}

/** Replaces, removes or adds fields of a JSON value, at any depth. */
function mutate(value: unknown): fc.Arbitrary<unknown> {
  if (value === null || typeof value !== "object") return fc.oneof(fc.constant(value), fc.jsonValue());
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  if (entries.length === 0) return fc.jsonValue();
  return fc
    .tuple(
      fc.nat({ max: entries.length - 1 }),
      fc.constantFrom("replace", "remove", "add", "deep"),
      fc.oneof(fc.jsonValue(), fc.string({ unit: "binary", maxLength: 3000 }), fc.constant("\u202e\u0000\ud800"), fc.integer(), fc.double()),
      fc.string({ maxLength: 20 }),
    )
    .chain(([i, how, junk, extraKey]) => {
      const [key, inner] = entries[i]!;
      const copy: Record<string, unknown> = Array.isArray(value) ? { ...value } : { ...(value as Record<string, unknown>) };
      const toValue = (o: Record<string, unknown>) => (Array.isArray(value) ? Object.values(o) : o);
      if (how === "remove") {
        delete copy[key];
        return fc.constant(toValue(copy));
      }
      if (how === "add") return fc.constant(toValue({ ...copy, [extraKey]: junk }));
      if (how === "deep" && inner !== null && typeof inner === "object") return mutate(inner).map((m) => toValue({ ...copy, [key]: m }));
      return fc.constant(toValue({ ...copy, [key]: junk }));
    });
}

// A path segment of one route: never empty, "." or ".." (fetch resolves those into another path).
const segment = fc
  .oneof(
    fc.constantFrom("8.8.8.8", "2001:db8::1", "org_x", "prj_x", "key_x", "%", "%E0%A4%A", "%00", "a".repeat(300)),
    fc.string({ maxLength: 40 }).map(encodeURIComponent),
    fc.string({ unit: "grapheme", maxLength: 20 }).map(encodeURIComponent),
  )
  .map((s) => (s === "" || /^(\.|%2e){1,2}$/i.test(s) ? "x" : s));

const query = fc.oneof(
  fc.constant(""),
  fc.dictionary(fc.constantFrom("include", "limit", "cursor", "kind", "session_id", "x"), fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("all", "region,rdns", "-1", "0", "101", "1e99"))).map(
    (q) => (Object.keys(q).length ? `?${new URLSearchParams(q as Record<string, string>).toString()}` : ""),
  ),
  fc.string({ maxLength: 30 }).map((s) => `?${encodeURIComponent(s)}`),
);

describe("every route under random input", () => {
  it("answers in the envelope, as documented, and never with a server error", async () => {
    // Unmetered, so thousands of calls never run into the free plan's 429.
    expect((await admin(server, "PATCH", `/v1/admin/orgs/${server.demo.orgId}`, { plan: "enterprise" })).status).toBe(200);
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(30);
    const credentials: Record<string, string> = { secretKey: server.demo.secretKey, publishableKey: server.demo.publishableKey, adminToken: ADMIN_TOKEN };
    const contentType = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("application/json", "application/json; charset=utf-8") },
      { weight: 1, arbitrary: fc.constantFrom("text/plain", undefined) },
    );
    let calls = 0;
    for (const op of ops) {
      const body = op.example === undefined ? fc.jsonValue() : fc.oneof(mutate(op.example), fc.jsonValue(), fc.constant(op.example));
      // The operation's own credential most of the time, so most calls get past authentication.
      const own = op.scheme ? credentials[op.scheme] : undefined;
      const key = fc.oneof(
        { weight: own ? 4 : 0, arbitrary: fc.constant(own) },
        { weight: 1, arbitrary: fc.constantFrom(...Object.values(credentials)) },
        { weight: 1, arbitrary: fc.constantFrom(undefined, "fs_live_not-a-real-key", "\u00ff\u00fe") },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(segment, { minLength: 4, maxLength: 4 }),
          query,
          key,
          contentType,
          fc.oneof(body.map((b) => JSON.stringify(b)), fc.string({ maxLength: 200 }), fc.constant(undefined)),
          async (params, q, key, contentType, raw) => {
            let i = 0;
            const path = op.path.replace(/\{[^}]+\}/g, () => params[i++]!) + q;
            const headers: Record<string, string> = {};
            if (contentType) headers["content-type"] = contentType;
            const hasBody = op.method !== "GET" && raw !== undefined;
            let r;
            try {
              r = await api(server, op.method, path, { key, rawBody: hasBody ? raw : undefined, headers });
            } catch (err) {
              // fetch refuses some header values and URLs before sending: nothing reached the server.
              if (err instanceof TypeError && /fetch|header|URL/i.test(err.message) && !/non-JSON|does not match/.test(err.message)) return;
              throw err;
            }
            calls++;
            expect(r.body.version).toBe("1");
            if (r.status >= 500) expect(ALLOWED_5XX.has(r.body.error?.code), `${op.method} ${path} -> ${r.status} ${JSON.stringify(r.body.error)}`).toBe(true);
          },
        ),
        { numRuns: RUNS_PER_ROUTE, seed: 20261124, endOnFailure: true },
      );
    }
    expect(calls).toBeGreaterThan(ops.length * RUNS_PER_ROUTE * 0.8);
    // The service is still whole afterwards.
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey })).status).toBe(200);
  }, scaled(600_000));
});
