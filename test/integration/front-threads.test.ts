import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { scaled } from "../helpers/time.js";
import { ADMIN_TOKEN, admin, api, createBeaconProject, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/**
 * Several front threads on one port (FS_FRONT_THREADS=4, more than this machine's cores): each a
 * uWS app of its own, the kernel spreading connections over them. Every call here opens a new
 * connection, so calls land on different threads. The kill -9 test has a server of its own, so
 * that a kill (or a test that fails half-way through one) never leaves the others without one.
 */
const THREADS = 4;
const ENV = { FS_FRONT_THREADS: String(THREADS), FS_ENABLE_METER: "true" };
let server!: TestServer;

/** A request on a connection of its own (node:http without an agent). */
function fresh(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  to: TestServer = server,
): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(to.url + path, { method: init.method ?? "GET", headers: { connection: "close", ...init.headers }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text && /json/.test(String(res.headers["content-type"])) ? JSON.parse(text) : text, headers: res.headers }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** Answered GET /readyz calls, from GET /metrics (on whichever thread the connection reaches). */
async function readyzCount(): Promise<number> {
  const r = await new Promise<string>((resolve, reject) => {
    const req = request(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, connection: "close" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve(text));
    });
    req.on("error", reject);
    req.end();
  });
  const m = /^fs_http_request_duration_seconds_count\{[^}]*route="\/readyz"[^}]*status="200"[^}]*\} (\d+)/m.exec(r);
  return m ? Number(m[1]) : 0;
}

const ip = (key: string) => fresh("/v1/ip/8.8.8.8", { headers: { authorization: `Bearer ${key}` } });

/** Resolves once the clock has moved past `ms` (observation ids are ordered to the millisecond). */
async function pastMillisecond(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setImmediate(r));
}

describe("several front threads on one port", () => {
  beforeAll(async () => {
    server = await startServer(ENV);
  });

  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
  });

  it("answers from every thread (readyz names the one that answered)", async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 80 && seen.size < THREADS; i++) {
      const r = await fresh("/readyz", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(r.status).toBe(200);
      expect(r.body.data.front.threads).toBe(THREADS);
      seen.add(r.body.data.front.thread);
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it("GET /metrics on any thread counts the answers of every thread", async () => {
    const before = await readyzCount();
    for (let i = 0; i < 40; i++) expect((await fresh("/readyz", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    // Each scrape lands on some thread; it sums all of them (the scrape's own readyz calls aside).
    expect((await readyzCount()) - before).toBeGreaterThanOrEqual(40);
  });

  it("the free-plan hard stop is exact across threads: with 9,990 of 10,000 used, 10 of 100 concurrent calls succeed", async () => {
    const { orgId, key } = await createOrgWithKey(server, "free");
    expect((await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 9_990, reason: "test" })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 100 }, () => ip(key)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(90);
    await expect.poll(async () => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used, { timeout: scaled(5000) }).toBe(10_000);
  });

  it("a key disabled on one thread is refused by every thread at once", async () => {
    const { key, keyId } = await createOrgWithKey(server, "pro");
    // Every thread has it cached.
    const before = await Promise.all(Array.from({ length: 24 }, () => ip(key)));
    expect(before.every((r) => r.status === 200)).toBe(true);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`)).status).toBe(200);
    const after = await Promise.all(Array.from({ length: 24 }, () => ip(key)));
    expect(after.map((r) => r.status)).toEqual(Array(24).fill(403));
  });

  it("an Idempotency-Key sent to several threads at once runs once and is charged once", async () => {
    const { orgId, key } = await createOrgWithKey(server, "pro", ["sessions"]);
    const body = JSON.stringify({ email: "ann@example.com" });
    const calls = await Promise.all(
      Array.from({ length: 12 }, () =>
        fresh("/v1/email", { method: "POST", body, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": "same-key-1" } }),
      ),
    );
    // Each answer is the first (200), a replay of it (200, Idempotent-Replayed), or "in use" (409).
    expect(calls.every((c) => c.status === 200 || c.status === 409)).toBe(true);
    const first = calls.filter((c) => c.status === 200 && c.headers["idempotent-replayed"] !== "true");
    expect(first).toHaveLength(1);
    const credits = first[0]!.body.metadata.credits as number;
    await expect.poll(async () => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used, { timeout: scaled(5000) }).toBe(credits);
  });

  it("every thread's writer requests get their own answers (the threads' request ids overlap)", async () => {
    const orgs = await Promise.all(Array.from({ length: 24 }, (_, i) => createOrgWithKey(server, i % 2 === 0 ? "free" : "business")));
    const answers = await Promise.all(orgs.map((o) => fresh(`/v1/orgs/${o.orgId}/usage`, { headers: { authorization: `Bearer ${o.key}` } })));
    expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
    expect(answers.map((a) => a.body.data.plan)).toEqual(orgs.map((_, i) => (i % 2 === 0 ? "free" : "business")));
  });

  it("a dashboard session signed in on one thread is known to every thread", async () => {
    const { key } = await createOrgWithKey(server, "pro");
    const login = await fresh("/dashboard/login", {
      method: "POST",
      body: new URLSearchParams({ key }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    });
    expect(login.status).toBe(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0]!;
    // Every page view on a new connection (any thread) finds the session.
    const views = await Promise.all(Array.from({ length: 16 }, () => fresh("/dashboard", { headers: { cookie } })));
    expect(views.map((v) => v.status)).toEqual(Array(16).fill(200));
  });

  it("lists the observations every thread journaled, newest first", async () => {
    const site = await createBeaconProject(server, "pro");
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await fresh("/v1/collect", { method: "POST", body: JSON.stringify({ action: `a${i}`, page: "/" }), headers: { authorization: `Bearer ${site.publishableKey}`, "content-type": "application/json" } });
      expect(r.status).toBe(200);
      ids.push(r.body.data.observation_id);
      // Across threads, observations are ordered to the millisecond (docs/api.md): apart by more.
      await pastMillisecond(Date.now() + 1);
    }
    const list = async (): Promise<string[]> =>
      (await api(server, "GET", `/v1/projects/${site.projectId}/observations?limit=50`, { key: site.secretKey })).body.data.items.map((o: { id: string }) => o.id);
    await expect.poll(list, { timeout: scaled(5000) }).toEqual([...ids].reverse());
  });

  // Last in this file: it leaves this address's wrong keys refused for the dashboard's sign-in window.
  it("counts wrong dashboard keys from every thread towards one sign-in limit, and lets the right key in on every thread", async () => {
    const { key } = await createOrgWithKey(server, "pro");
    const signIn = (k: string) =>
      fresh("/dashboard/login", { method: "POST", body: new URLSearchParams({ key: k }).toString(), headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url } });
    const threads = new Set<number>();
    for (let i = 0; i < 10; i++) {
      expect((await signIn(`fs_live_${"x".repeat(43)}${i}`)).status).toBe(401);
      threads.add((await fresh("/readyz", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.data.front.thread);
    }
    expect(threads.size).toBeGreaterThan(1); // the wrong keys reached several threads
    // Ten wrong keys from this address in all: every thread answers the next ones 429 (each thread
    // takes the others' counts within its next event-loop turn)...
    const wrong = async () => (await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(`fs_live_${"z".repeat(43)}${i}`)))).map((a) => a.status);
    await expect.poll(wrong, { timeout: scaled(5000) }).toEqual(Array(12).fill(429));
    // ...and lets the right key in.
    const right = await Promise.all(Array.from({ length: 12 }, () => signIn(key)));
    expect(right.map((a) => a.status)).toEqual(Array(12).fill(303));
  });
});

describe("kill -9 of several front threads", () => {
  it(
    "kill -9 with every thread charging: after a restart the ledger holds every answered charge",
    async () => {
      // Two threads: what the journal must hold together is the charges of more than one thread;
      // each start of four costs twice the CPU, and this test starts three times.
      const own = await startServer({ ...ENV, FS_FRONT_THREADS: "2" });
      try {
        const { orgId, key } = await createOrgWithKey(own, "pro");
        const charge = () => fresh("/v1/ip/8.8.8.8", { headers: { authorization: `Bearer ${key}` } }, own);
        let answered = 0;
        const load = (async () => {
          for (;;) {
            const rs = await Promise.all(Array.from({ length: 16 }, () => charge().catch(() => null)));
            answered += rs.filter((r) => r?.status === 200).length;
            if (rs.some((r) => r === null)) return;
          }
        })();
        // Killed with charges answered on many connections, so on every thread (16 at a time).
        await expect.poll(() => answered, { timeout: scaled(60_000), interval: 20 }).toBeGreaterThanOrEqual(160);
        await own.kill9();
        await load;
        await own.restart();
        const used = (await api(own, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used as number;
        // Answered charges are all there; calls cut by the kill may be charged too, never more than sent.
        expect(used).toBeGreaterThanOrEqual(answered);
        expect(used).toBeLessThanOrEqual(answered + 16);
        // A clean stop with every thread's connections closed exits 0; the next start is clean.
        await own.stop();
        expect(own.exitCode()).toBe(0);
        await own.restart();
        expect(own.output()).not.toMatch(/replayed charge journal/);
      } finally {
        await own.stop();
        own.cleanup();
      }
    },
    // Three starts of a server with two front threads, and the load between them.
    scaled(240_000),
  );
});
