import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient, FraudscoreError, type FraudscoreClient, type paths } from "@fraudscore/client";
import { useApp, type TestApp } from "../../../test/helpers/app.js";
import { ADMIN_TOKEN, admin, createOrgWithKey } from "../../../test/integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** Calls the in-process app through `fetch`, checking each answer against its OpenAPI document and keeping each request. */
function recorder() {
  const requests: Request[] = [];
  const fetcher = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    requests.push(request.clone());
    const response = await server.fetch(request.url, { method: request.method, headers: request.headers, body: init?.body ?? null, signal: init?.signal ?? null });
    const text = await response.clone().text();
    const problem = text.startsWith("{") ? server.contract.check(request.method, new URL(request.url).pathname, response.status, JSON.parse(text)) : null;
    if (problem) throw new Error(`answer of ${request.method} ${request.url} breaks the contract: ${problem}`);
    return response;
  };
  return { requests, fetch: fetcher as typeof fetch };
}

function clientFor(key: string, extra: Partial<Parameters<typeof createClient>[0]> = {}): { client: FraudscoreClient; requests: Request[] } {
  const r = recorder();
  return { client: createClient({ baseUrl: server.url, apiKey: key, fetch: r.fetch, ...extra }), requests: r.requests };
}

describe("@fraudscore/client against the real service", () => {
  it("unwraps the envelope of a success into typed data with the request id", async () => {
    const org = await createOrgWithKey(server);
    const { client } = clientFor(org.key);
    const r = await client.post("/v1/check", { body: { form_id: "signup", metadata: { email: "jane.doe@gmail.com", ip: "203.0.113.7" } } });
    expect(r.ok, String(r.error?.cause)).toBe(true);
    if (!r.ok) return;
    expectTypeOf(r.data.decision).toEqualTypeOf<"allow" | "review" | "block">();
    expect(["allow", "review", "block"]).toContain(r.data.decision);
    expect(r.requestId).toMatch(/^req_/);
    expect(r.status).toBe(200);
    const ip = await client.get("/v1/ip/{ip}", { path: { ip: "8.8.8.8" } });
    expect(ip.ok && ip.data.ip).toBe("8.8.8.8");
    const usage = await client.get("/v1/orgs/{orgId}/usage", { path: { orgId: org.orgId } });
    expect(usage.ok).toBe(true);
  });

  it("answers a typed error with code, message, status and request id", async () => {
    const org = await createOrgWithKey(server);
    const { client } = clientFor(org.key);
    const bad = await client.post("/v1/check", { body: { form_id: "" } });
    expect(bad.ok).toBe(false);
    expect(bad.error).toBeInstanceOf(FraudscoreError);
    expect(bad.error).toMatchObject({ code: "VALIDATION_ERROR", status: 400, attempts: 1 });
    expect(bad.error!.requestId).toMatch(/^req_/);
    expect(bad.error!.message).toMatch(/form_id/);
    const wrongKey = await clientFor("fs_live_nope").client.get("/v1/ip/{ip}", { path: { ip: "8.8.8.8" } });
    expect(wrongKey.error).toMatchObject({ code: "INVALID_KEY", status: 401 });
  });

  it("reaches every route of the document and reads every answer as data or a catalogued error", async () => {
    const org = await createOrgWithKey(server);
    const { client } = clientFor(org.key, { retry: { maxRetries: 0 } });
    const doc = (await client.get("/openapi.json")) as { ok: true; data: { paths: Record<string, Record<string, { tags: string[] }>> } };
    expect(doc.ok).toBe(true);
    const codes = new Set(Object.keys((await import("../../../src/shared/errors.js")).ERROR_CATALOGUE));
    let calls = 0;
    for (const [path, item] of Object.entries(doc.data.paths)) {
      for (const [method, op] of Object.entries(item)) {
        // The client is for the JSON API: not HEAD, not the CORS preflights, not the pages (the beacon script, the demo).
        if (method === "head" || method === "options" || op.tags.includes("pages")) continue;
        const params = Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], m[1] === "ip" ? "8.8.8.8" : m[1] === "orgId" ? org.orgId : "none"]));
        const r = await (client.request as (m: string, p: string, o: object) => ReturnType<FraudscoreClient["get"]>)(method, path, { path: params });
        calls++;
        if (r.ok) continue;
        expect(codes.has(r.error.code), `${method} ${path}: ${r.error.code}`).toBe(true);
        expect(r.error.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(r.error.requestId, `${method} ${path}`).toMatch(/^req_/);
      }
    }
    expect(calls).toBeGreaterThan(30);
  });

  it("sets an Idempotency-Key on POSTs and reuses it on the retry after a lost answer: run and charged once", async () => {
    const org = await createOrgWithKey(server);
    const r = recorder();
    let dropped = 0;
    // The network loses the first answer after the service has produced it.
    const lossy = (async (input: string, init?: RequestInit) => {
      const response = await r.fetch(input, init);
      if (dropped++ === 0) throw new TypeError("fetch failed: connection reset");
      return response;
    }) as typeof fetch;
    const client = createClient({ baseUrl: server.url, apiKey: org.key, fetch: lossy, retry: { baseDelayMs: 1 } });
    const result = await client.post("/v1/check", { body: { form_id: "signup", metadata: { email: "a.b@gmail.com" } } });
    expect(result.ok).toBe(true);
    expect(r.requests).toHaveLength(2);
    const keys = r.requests.map((q) => q.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(result.ok && result.headers.get("idempotent-replayed")).toBe("true");
    const seen = await clientFor(org.key).client.get("/v1/orgs/{orgId}/usage", { path: { orgId: org.orgId } });
    expect(seen.ok && seen.data.used).toBe(result.ok && result.metadata!.credits);
    // A GET carries no key; a second POST gets a key of its own.
    await client.get("/healthz");
    await client.post("/v1/check", { body: { form_id: "signup" } });
    expect(r.requests[2]!.headers.get("idempotency-key")).toBeNull();
    expect(r.requests[3]!.headers.get("idempotency-key")).not.toBe(keys[0]);
  });

  it("retries a 429 after the Retry-After the service sends, then returns the error", async () => {
    const limited = await startLimitedApp();
    try {
      const waits: number[] = [];
      const client = createClient({
        baseUrl: limited.url,
        apiKey: limited.demo.publishableKey,
        fetch: ((url: string, init?: RequestInit) => limited.fetch(url, { ...init, headers: { ...(init?.headers as object), origin: "http://localhost" } })) as typeof fetch,
        retry: { maxRetries: 2, maxDelayMs: 120_000, sleep: async (ms) => void waits.push(ms) },
      });
      await client.post("/v1/handshake", { body: {} });
      const r = await client.post("/v1/handshake", { body: {} });
      expect(r.error).toMatchObject({ code: "RATE_LIMITED", status: 429, attempts: 3 });
      expect(waits).toHaveLength(2);
      for (const ms of waits) expect(ms).toBe(r.error!.retryAfterMs);
      expect(r.error!.retryAfterMs).toBeGreaterThan(0);
    } finally {
      await limited.stop();
      limited.cleanup();
    }
  });

  it("does not wait for a Retry-After longer than maxDelayMs (a monthly quota)", async () => {
    const org = await createOrgWithKey(server);
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 10_000, reason: "test" });
    const { client, requests } = clientFor(org.key);
    const r = await client.get("/v1/ip/{ip}", { path: { ip: "8.8.8.8" } });
    expect(r.error).toMatchObject({ code: "QUOTA_EXCEEDED", status: 429, attempts: 1 });
    expect(r.error!.retryAfterMs).toBeGreaterThan(30_000);
    expect(requests).toHaveLength(1);
  });

  it("gives up an attempt after timeoutMs (TIMEOUT), and reports an unreachable service (NETWORK_ERROR)", async () => {
    const blackHole = ((_: string, init?: RequestInit) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)))) as typeof fetch;
    const slow = createClient({ baseUrl: server.url, apiKey: ADMIN_TOKEN, fetch: blackHole, timeoutMs: 20, retry: { maxRetries: 1, baseDelayMs: 1 } });
    const r = await slow.get("/healthz");
    expect(r.error).toMatchObject({ code: "TIMEOUT", status: 0, requestId: null, attempts: 2 });
    const down = createClient({ baseUrl: "http://127.0.0.1:9", retry: { maxRetries: 0 } });
    expect((await down.get("/healthz")).error).toMatchObject({ code: "NETWORK_ERROR", status: 0 });
  });

  it("types paths, bodies and answers from the generated document", () => {
    type CheckBody = paths["/v1/check"]["post"]["requestBody"]["content"]["application/json"];
    expectTypeOf<CheckBody["form_id"]>().toEqualTypeOf<string>();
    const client = createClient({ baseUrl: "http://x" });
    // @ts-expect-error: no such path
    void (() => client.get("/v1/nope"));
    // @ts-expect-error: /v1/check takes a body
    void (() => client.post("/v1/check"));
    // @ts-expect-error: the path parameter is required
    void (() => client.get("/v1/ip/{ip}", {}));
  });
});

async function startLimitedApp(): Promise<TestApp> {
  const { startApp } = await import("../../../test/helpers/app.js");
  return startApp({ FS_BEACON_ADDRESS_LIMIT: "1" });
}
