import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchange } from "./helpers/raw-http.js";
import { api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, item 11: requests with odd headers. Two Content-Length headers that differ reached
 * the application (uWebSockets.js frames the body by the first, a proxy in front may have framed
 * it by the other: a request smuggled behind it); now they are refused with 400 and the connection
 * is closed, nothing run or charged. Header lines uWebSockets.js's parser cannot read (no colon, a
 * NUL) get no answer from it; such a connection holds no body memory, is closed by its idle
 * timeout, and other clients are served meanwhile.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

async function used(org: { orgId: string; key: string }): Promise<number> {
  const r = await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key });
  expect(r.status).toBe(200);
  return r.body.data.used as number;
}

function post(path: string, headers: string[], body: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => `${h}\r\n`).join("")}\r\n${body}`;
}

describe("conflicting Content-Length headers", () => {
  it("POST /v1/email with two Content-Length headers that differ: 400, connection closed, nothing charged", async () => {
    const org = await createOrgWithKey(server);
    const body = JSON.stringify({ email: "someone@example.com" });
    const before = await used(org);
    for (const lengths of [[body.length, body.length + 5], [body.length + 5, body.length]]) {
      const text = post("/v1/email", [`Authorization: Bearer ${org.key}`, "Content-Type: application/json", ...lengths.map((n) => `Content-Length: ${n}`)], body);
      const { responses, closedByServer } = await exchange(server.port, text);
      expect(responses).toHaveLength(1);
      expect(responses[0]!.status).toBe(400);
      const envelope = JSON.parse(responses[0]!.body);
      expect(envelope.error.code).toBe("VALIDATION_ERROR");
      expect(envelope.error.message).toMatch(/^header\.content-length: /);
      expect(envelope.metadata.credits).toBe(0);
      expect(closedByServer).toBe(true);
    }
    expect(await used(org)).toBe(before);
  });

  it("the same Content-Length sent twice is one length: answered", async () => {
    const org = await createOrgWithKey(server);
    const body = JSON.stringify({ text: "hello there, how are you" });
    const text = post("/v1/content", [`Authorization: Bearer ${org.key}`, "Content-Type: application/json", `Content-Length: ${body.length}`, `Content-Length: ${body.length}`], body);
    const { responses } = await exchange(server.port, text, { count: 1 });
    expect(responses[0]!.status).toBe(200);
  });

  it("is refused on the beacon and the dashboard form too (the same body reader as the webhook)", async () => {
    const form = "key=x";
    const cases = [
      post("/v1/collect", [`Authorization: Bearer ${server.demo.publishableKey}`, "Content-Type: application/json", "Content-Length: 2", "Content-Length: 40"], "{}"),
      post("/dashboard/login", ["Content-Type: application/x-www-form-urlencoded", `Content-Length: ${form.length}`, "Content-Length: 99"], form),
    ];
    for (const text of cases) {
      const { responses, closedByServer } = await exchange(server.port, text);
      expect([text.split("\r\n")[0], responses.length, responses[0]!.status, closedByServer]).toEqual([text.split("\r\n")[0], 1, 400, true]);
    }
  });
});

describe("header lines the HTTP parser cannot read", () => {
  it("get no answer, run nothing, and do not hold up anyone else; the connection is closed by the idle timeout", async () => {
    const org = await createOrgWithKey(server);
    const before = await used(org);
    const bad = [
      `GET /v1/ip/8.8.8.8 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nNoColonHere\r\n\r\n`,
      `GET /v1/ip/8.8.8.8 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nX-A: a\0b\r\n\r\n`,
    ];
    const pending = bad.map((text) => exchange(server.port, text));
    // Meanwhile another client is served.
    const ok = await api(server, "GET", "/v1/ip/1.1.1.1", { key: org.key });
    expect(ok.status).toBe(200);
    const results = await Promise.all(pending);
    for (const r of results) {
      expect(r.closedByServer).toBe(true);
      expect(r.responses.every((x) => x.status >= 400)).toBe(true);
    }
    expect(await used(org)).toBe(before + 1);
  });

  it("a request head that never ends holds a connection, not memory: the server still answers others", async () => {
    const sockets = Array.from({ length: 50 }, () => {
      const s = connect(server.port, "127.0.0.1", () => s.write("POST /v1/collect HTTP/1.1\r\nHost: x\r\nX-Slow: "));
      s.on("error", () => {});
      return s;
    });
    try {
      const r = await api(server, "GET", "/healthz");
      expect(r.status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
