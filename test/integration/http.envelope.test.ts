import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, api, useServer, type TestServer } from "./helpers/server.js";

let server!: TestServer;
useServer((s) => (server = s), { FS_MAX_BODY_BYTES: "1024" });

function expectErrorEnvelope(body: any, code: string): void {
  expect(body.version).toBe("1");
  expect(body.data).toBeNull();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.metadata.request_id).toBe("string");
  expect(typeof body.metadata.processing_time_ms).toBe("number");
}

describe("envelope and front-end errors", () => {
  it("404 NOT_FOUND for unknown routes, any method", async () => {
    for (const method of ["GET", "POST", "PUT"]) {
      const r = await api(server, method, "/v1/nothing-here");
      expect(r.status).toBe(404);
      expectErrorEnvelope(r.body, "NOT_FOUND");
    }
  });

  it("405 METHOD_NOT_ALLOWED with Allow for a known path", async () => {
    const r = await api(server, "GET", "/v1/admin/orgs/org_x/usage/adjust", { key: ADMIN_TOKEN });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    const both = await api(server, "DELETE", "/v1/admin/orgs", { key: ADMIN_TOKEN });
    expect(both.status).toBe(405);
    expect(both.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD", "POST"]);
    expectErrorEnvelope(r.body, "METHOD_NOT_ALLOWED");
  });

  it("415 UNSUPPORTED_MEDIA_TYPE for a body without application/json", async () => {
    const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, rawBody: '{"name":"x"}', headers: { "content-type": "text/plain" } });
    expect(r.status).toBe(415);
    expectErrorEnvelope(r.body, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("accepts application/json with a charset parameter", async () => {
    const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, rawBody: '{"name":"x"}', headers: { "content-type": "application/json; charset=utf-8" } });
    expect(r.status).toBe(201);
  });

  it("400 VALIDATION_ERROR for malformed JSON", async () => {
    const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, rawBody: '{"name": ', headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expectErrorEnvelope(r.body, "VALIDATION_ERROR");
    expect(r.body.error.message).toMatch(/^body: malformed JSON/);
  });

  it("400 VALIDATION_ERROR names the failing field path", async () => {
    const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, body: { name: "x", plan: "platinum" } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^body\.plan:/);
    const nested = await api(server, "POST", `/v1/admin/orgs/${server.demo.orgId}/keys`, { key: ADMIN_TOKEN, body: { type: "secret", scopes: ["sessions", "root"] } });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toMatch(/^body\.scopes\.1:/);
  });

  it("413 PAYLOAD_TOO_LARGE past FS_MAX_BODY_BYTES, declared or streamed", async () => {
    const big = JSON.stringify({ name: "x".repeat(2000) });
    const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, rawBody: big, headers: { "content-type": "application/json" } });
    expect(r.status).toBe(413);
    expectErrorEnvelope(r.body, "PAYLOAD_TOO_LARGE");
    // Chunked upload: no Content-Length, the limit is enforced while reading.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode("x".repeat(600)));
        c.close();
      },
    });
    const res = await fetch(server.url + "/v1/admin/orgs", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expectErrorEnvelope(await res.json(), "PAYLOAD_TOO_LARGE");
  });

  it("echoes a sane X-Request-Id and replaces an unsafe one", async () => {
    const ok = await api(server, "GET", "/healthz", { headers: { "x-request-id": "abc-123.def:9" } });
    expect(ok.body.metadata.request_id).toBe("abc-123.def:9");
    expect(ok.headers.get("x-request-id")).toBe("abc-123.def:9");
    const bad = await api(server, "GET", "/healthz", { headers: { "x-request-id": "a b<script>" } });
    expect(bad.body.metadata.request_id).toMatch(/^req_[0-9A-Za-z]{12}_[0-9a-z]+$/);
    const other = await api(server, "GET", "/healthz");
    expect(other.body.metadata.request_id).not.toBe(bad.body.metadata.request_id);
    const long = await api(server, "GET", "/healthz", { headers: { "x-request-id": "a".repeat(200) } });
    expect(long.body.metadata.request_id).toMatch(/^req_/);
  });

  it("success envelopes have data and a null error", async () => {
    const r = await api(server, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: "1", data: { status: "ok" }, error: null });
  });

  it("keeps serving after a client aborts mid-body", async () => {
    const ctrl = new AbortController();
    // fetch pulls the second piece once it has sent the first: the request is on its way.
    let sending!: () => void;
    const sent = new Promise<void>((r) => (sending = r));
    let pieces = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (pieces++ === 0) c.enqueue(new TextEncoder().encode('{"name":'));
        else sending();
      },
    });
    const p = fetch(server.url + "/v1/admin/orgs", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
      signal: ctrl.signal,
    } as RequestInit).catch((e: Error) => e);
    await sent;
    ctrl.abort();
    expect(await p).toBeInstanceOf(Error);
    const after = await api(server, "GET", "/healthz");
    expect(after.status).toBe(200);
  });

  it("answers 404 for a trailing slash instead of a self-contradictory 405", async () => {
    const r = await api(server, "GET", "/healthz/");
    expect(r.status).toBe(404);
    expectErrorEnvelope(r.body, "NOT_FOUND");
  });

  it("answers HEAD on the health routes with no body", async () => {
    const res = await fetch(server.url + "/healthz", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    const ready = await fetch(server.url + "/readyz", { method: "HEAD" });
    expect(ready.status).toBe(200);
  });

  it("400 for a body that is not valid UTF-8", async () => {
    const bad = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await fetch(server.url + "/v1/admin/orgs", { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: bad });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expectErrorEnvelope(body, "VALIDATION_ERROR");
    expect(body.error.message).toMatch(/UTF-8/);
  });

  it("400 for malformed percent-encoding in a query parameter, before anything is charged", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8?include=%ZZ", { key: server.demo.secretKey });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^query\.include/);
    expect(r.body.metadata.credits).toBe(0);
    const long = await api(server, "GET", `/v1/ip/8.8.8.8?include=${"x".repeat(3000)}`, { key: server.demo.secretKey });
    expect(long.status).toBe(400);
    expect(long.body.error.message.length).toBeLessThan(300);
  });

  it("400 for a test clock outside the years 2000-9999", async () => {
    for (const t of ["1", "253402300800000", "abc"]) {
      const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey, headers: { "x-fs-test-now": t } });
      expect(r.status, t).toBe(400);
      expect(r.body.error.message).toMatch(/x-fs-test-now/);
    }
  });
});
