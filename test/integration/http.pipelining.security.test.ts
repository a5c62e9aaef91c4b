import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "./helpers/dns-server.js";
import { exchange, type RawResponse } from "./helpers/raw-http.js";
import { api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, item 3: pipelined requests were charged but never answered. uWebSockets.js answers
 * pipelined requests only while each is answered synchronously; a request that arrives behind an
 * asynchronous answer makes it close the connection. A metered answer waits for its debit to be
 * journaled, so the first request was charged and its answer could never be written. Now the
 * debit is dropped when the request's connection is gone by the time it would be written: the
 * credits an org is charged equal the credits stated in the answers its client received.
 */
let server: TestServer;
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({ mx: { "shop.example.test": [{ exchange: "mx.shop.example.test.", priority: 10 }] }, silent: ["slow.example.test", "slower.example.test"] });
  server = await startServer({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "1500", FS_MX_CANARY: "shop.example.test" });
});
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

async function used(org: { orgId: string; key: string }): Promise<number> {
  const r = await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key });
  expect(r.status).toBe(200);
  return r.body.data.used as number;
}

/** Credits stated in the answers (metadata.credits). */
function creditsIn(responses: RawResponse[]): number {
  return responses.reduce((n, r) => n + ((JSON.parse(r.body) as { metadata: { credits?: number } }).metadata.credits ?? 0), 0);
}

function post(path: string, key: string, body: unknown): string {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

describe("pipelined metered requests", () => {
  it("20 pipelined POST /v1/email: the org is charged exactly the credits of the answers received", async () => {
    const org = await createOrgWithKey(server);
    // The domain's MX answer is cached first, so the pipelined calls answer without waiting for DNS.
    const warm = await api(server, "POST", "/v1/email", { key: org.key, body: { email: "a@shop.example.test" } });
    expect(warm.body.metadata).toMatchObject({ credits: 3, mx_cache: "miss" });
    const before = await used(org);
    const { responses } = await exchange(server.port, post("/v1/email", org.key, { email: "b@shop.example.test" }).repeat(20));
    expect(await used(org)).toBe(before + creditsIn(responses));
  });

  it("20 pipelined GET /v1/ip/{ip}: the same", async () => {
    const org = await createOrgWithKey(server);
    const { responses } = await exchange(server.port, `GET /v1/ip/8.8.8.8 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\n\r\n`.repeat(20));
    expect(await used(org)).toBe(creditsIn(responses));
  });

  it("answers pipelined requests answered at once (GET /healthz, a wrong key, an unknown path) in order", async () => {
    const text = [
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/ip/8.8.8.8 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fs_live_wrong\r\n\r\n",
      "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    ].join("");
    const { responses } = await exchange(server.port, text, { count: 4 });
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 200]);
  });

  it("does not charge a client that disconnects before its answer", async () => {
    const org = await createOrgWithKey(server);
    const queries = dns.queries;
    // The MX lookup of slow.example.test is never answered: the call waits FS_RDNS_TIMEOUT_MS.
    const s = connect(server.port, "127.0.0.1", () => s.write(post("/v1/email", org.key, { email: "a@slow.example.test" })));
    s.on("error", () => {});
    try {
      await expect.poll(() => dns.queries).toBeGreaterThan(queries);
    } finally {
      s.destroy();
    }
    // A call started after it waits as long: once this one is answered, the first is done too.
    const second = await api(server, "POST", "/v1/email", { key: org.key, body: { email: "a@slower.example.test" } });
    expect(second.body.metadata.credits).toBe(3);
    expect(await used(org)).toBe(3);
  });
});
