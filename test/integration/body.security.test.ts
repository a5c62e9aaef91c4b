import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "./helpers/dns-server.js";
import { quantile, SlowBody, timedRequest } from "./helpers/raw-http.js";
import { createBeaconProject, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { eventOf, nowSeconds, signedWebhook, startStripeServer, stripeEnv, TEST_WEBHOOK_SECRET, type TestStripeServer } from "./helpers/stripe-server.js";
import { scaled } from "../helpers/time.js";

/**
 * Issue 25, item 1: slow clients cannot hold what others need. Before, each body leased its
 * declared Content-Length from a pool shared by every client up front, and nothing bounded how
 * long a body could take: eight connections declaring 1 MiB to the Stripe webhook and sending a
 * byte now and then made every public route answer 503, and one org's slow POST /v1/check bodies
 * did the same to another org's POST /v1/email. Now bytes count as they arrive, a client address
 * (or an org) holds at most its share of a pool, and a body still arriving after
 * FS_BODY_TIMEOUT_MS (below FS_BODY_MIN_BYTES_PER_SECOND) is answered 408 and its connection closed.
 *
 * The attack comes from 127.0.0.1; the probes, other clients, from 127.0.0.2.
 */
const TIMEOUT_MS = 6000;
/** Exactly 34 declared bodies of 60,000 bytes fill the keyed pool of the old, declared-length accounting. */
const DECLARED = 60_000;
const KEYED_POOL = 34 * DECLARED;
const ORG_SHARE = 512 * 1024;
const OTHER = "127.0.0.2";

let fake: TestStripeServer;
let dns: TestDnsServer;
let server: TestServer;

beforeAll(async () => {
  fake = await startStripeServer();
  dns = await startDnsServer({ mx: { "shop.example.test": [{ exchange: "mx.shop.example.test.", priority: 10 }] } });
  server = await startServer(
    stripeEnv(fake.port, {
      FS_BODY_TIMEOUT_MS: String(TIMEOUT_MS),
      FS_BODY_BUFFER_BYTES: String(KEYED_POOL),
      FS_BODY_BUFFER_PER_ORG_BYTES: String(ORG_SHARE),
      FS_DNS_SERVERS: `127.0.0.1:${dns.port}`,
      FS_MX_CANARY: "shop.example.test",
    }),
  );
});
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await fake?.close();
  await dns?.close();
});

function head(path: string, headers: Record<string, string>, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}Content-Length: ${length}\r\n\r\n`;
}

/** Opens the slow bodies, then sends each of them a byte every second until stop() (uWS alone would keep them open). */
async function attack(bodies: SlowBody[]): Promise<{ stop(): void }> {
  await Promise.all(bodies.map((b) => b.opened()));
  const timer = setInterval(() => {
    for (const b of bodies) b.trickle();
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      for (const b of bodies) b.close();
    },
  };
}

/** Probes of the public routes and another org's keyed route, from another address. */
async function probe(rounds: number, p: { publishableKey: string }, other: { key: string }) {
  const results: Array<{ route: string; status: number; ms: number }> = [];
  const url = (path: string) => `${server.url}${path}`;
  for (let i = 0; i < rounds; i++) {
    const collect = await timedRequest(url("/v1/collect"), {
      method: "POST",
      localAddress: OTHER,
      headers: { authorization: `Bearer ${p.publishableKey}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "pageview", page: "/" }),
    });
    results.push({ route: "collect", ...collect });
    const login = await timedRequest(url("/dashboard/login"), {
      method: "POST",
      localAddress: OTHER,
      headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ key: server.demo.secretKey }).toString(),
    });
    results.push({ route: "login", ...login });
    // Signed, read whole and verified, then refused for its envelope: an event that is applied
    // waits for a flushed commit, whose time is the disk's, not the front's.
    const webhook = await timedRequest(url("/webhooks/stripe"), signedEvent(eventOf("Not.A.Type", { id: `cus_probe${i}`, object: "customer" })));
    results.push({ route: "webhook", ...webhook });
    const email = await timedRequest(url("/v1/email"), {
      method: "POST",
      localAddress: OTHER,
      headers: { authorization: `Bearer ${other.key}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "jane@shop.example.test" }),
    });
    results.push({ route: "email", ...email });
  }
  return results;
}

const EXPECTED: Record<string, number> = { collect: 200, login: 303, webhook: 400, email: 200 };

/** A webhook delivery from another address, signed as Stripe signs. */
function signedEvent(event: unknown): Parameters<typeof timedRequest>[1] {
  const body = JSON.stringify(event);
  return { method: "POST", localAddress: OTHER, headers: { "stripe-signature": signedWebhook(body, TEST_WEBHOOK_SECRET), "content-type": "application/json" }, body };
}

function expectServed(results: Awaited<ReturnType<typeof probe>>): void {
  const wrong = results.filter((r) => r.status !== EXPECTED[r.route]);
  expect(wrong.map((r) => `${r.route} ${r.status}`), "probes from another address answered as without the attack").toEqual([]);
  const ms = results.map((r) => r.ms);
  const p99 = quantile(ms, 0.99);
  expect(p99, `p99 of ${results.length} probes (median ${quantile(ms, 0.5).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms)`).toBeLessThan(100);
}

describe("slow request bodies", () => {
  it("under 8 slow 1 MiB webhooks and hundreds of slow bodies from one address, other clients are served; the slow ones get 408 at the deadline", async () => {
    const p = await createBeaconProject(server);
    const attacker = await createOrgWithKey(server);
    const other = await createOrgWithKey(server);
    await probe(1, p, other); // warms the MX cache and the connections' code paths
    const sig = `t=${nowSeconds()},v1=${"0".repeat(64)}`;
    const bodies = [
      ...Array.from({ length: 8 }, () => new SlowBody(server.port, head("/webhooks/stripe", { "stripe-signature": sig, "content-type": "application/json" }, 1024 * 1024))),
      ...Array.from({ length: 200 }, () => new SlowBody(server.port, head("/v1/collect", { authorization: `Bearer ${p.publishableKey}`, "content-type": "application/json" }, DECLARED))),
      ...Array.from({ length: 40 }, () => new SlowBody(server.port, head("/dashboard/login", { origin: server.url, "content-type": "application/x-www-form-urlencoded" }, DECLARED))),
      ...Array.from({ length: 150 }, () => new SlowBody(server.port, head("/v1/check", { authorization: `Bearer ${attacker.key}`, "content-type": "application/json" }, DECLARED))),
    ];
    const slow = await attack(bodies);
    try {
      const results = await probe(40, p, other);
      expectServed(results);
      // A well-formed event is applied meanwhile.
      const applied = await timedRequest(`${server.url}/webhooks/stripe`, signedEvent(eventOf("customer.created", { id: "cus_during_attack", object: "customer" })));
      expect([applied.status, JSON.parse(applied.body).data.received]).toEqual([200, true]);
      // The attack was on for every probe: no slow body had been answered or cut yet.
      expect(bodies.filter((b) => b.closed || b.response).length, "slow bodies answered before the probes ended").toBe(0);
      // Every slow body is cut at the deadline: 408 REQUEST_TIMEOUT, connection closed.
      await expect.poll(() => bodies.filter((b) => b.closed).length, { timeout: TIMEOUT_MS + 15_000, interval: 200 }).toBe(bodies.length);
      expect(bodies.map((b) => b.response?.status)).toEqual(bodies.map(() => 408));
      const envelope = JSON.parse(bodies[0]!.response!.body) as { error: { code: string } };
      expect(envelope.error.code).toBe("REQUEST_TIMEOUT");
      expect(bodies[0]!.response!.headers.connection).toBe("close");
    } finally {
      slow.stop();
    }
  }, scaled(60_000));

  it("one org's slow POST /v1/check bodies hold at most its share of the keyed pool: another org's POST /v1/email is answered", async () => {
    const attacker = await createOrgWithKey(server);
    const other = await createOrgWithKey(server);
    const p = await createBeaconProject(server);
    await probe(1, p, other);
    // Most of each body at once (real bytes held), then a byte now and then.
    const bodies = Array.from(
      { length: 40 },
      () => new SlowBody(server.port, head("/v1/check", { authorization: `Bearer ${attacker.key}`, "content-type": "application/json" }, DECLARED), Buffer.alloc(DECLARED - 1000, 0x20)),
    );
    const slow = await attack(bodies);
    try {
      const results = await probe(25, p, other);
      expectServed(results);
      // Past its share the attacker's own bodies are refused at once.
      await expect.poll(() => bodies.filter((b) => b.response?.status === 503).length).toBeGreaterThanOrEqual(40 - Math.ceil(ORG_SHARE / (DECLARED - 1000)));
      const refused = bodies.find((b) => b.response?.status === 503)!;
      expect(JSON.parse(refused.response!.body).error.code).toBe("OVERLOADED");
      expect(refused.response!.headers["retry-after"]).toBe("1");
      // The bodies within the share are cut at the deadline.
      await expect.poll(() => bodies.filter((b) => b.response?.status === 408).length, { timeout: TIMEOUT_MS + 15_000, interval: 200 }).toBe(bodies.filter((b) => b.response?.status !== 503).length);
    } finally {
      slow.stop();
    }
  }, scaled(60_000));
});
