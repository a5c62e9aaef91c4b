import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createBeaconProject, startServer, type TestServer } from "./helpers/server.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { percentile, PgProxy } from "./helpers/faults.js";
import { clusterNodeEnv, IpLoad, usedOf } from "./helpers/cluster.js";

/**
 * Issue 26: a node whose database link is frozen or slow (a TCP proxy between it and
 * PostgreSQL) keeps answering what does not need the database at its usual latency, replaces a
 * dead connection without waiting for the link, and keeps shipping its debits.
 */
let db!: TestPostgres;
let url!: string;
let proxy!: PgProxy;
let node!: TestServer;

beforeAll(async () => {
  db = await startPostgres({ durable: true });
  url = await db.createDatabase("fs_link");
  proxy = await PgProxy.start(db.port);
  node = await startServer(clusterNodeEnv(proxy.url(url), "a", { FS_PG_TIMEOUT_MS: "1000" }));
}, 180_000);

afterAll(async () => {
  proxy?.thaw();
  proxy?.delay(0);
  await node?.stop();
  node?.cleanup();
  await proxy?.close();
  await db?.destroy();
});

/** The answers of a load sent between `from` and `to` (performance.now()). */
function answersBetween(load: IpLoad, from: number, to: number): Array<{ ms: number; status: number }> {
  return load.tally.samples.filter((s) => s.at >= from && s.at < to);
}

describe("a node's database link frozen or slow", () => {
  it("frozen: paid /v1/ip and the beacon answer throughout at their usual latency; the dead connection is replaced", async () => {
    const site = await createBeaconProject(node, "pro");
    const h = await api(node, "POST", "/v1/handshake", { key: site.publishableKey, body: {} });
    expect(h.status).toBe(200);
    const resolve = () =>
      api(node, "POST", "/v1/sessions/resolve", { key: site.secretKey, body: { observation_type: "auth.login", external_user_id: "u-1", session_id: h.body.data.session_id } });
    expect((await resolve()).status).toBe(200);
    const load = new IpLoad(() => [node], site.secretKey, 4, { paceMs: 5 });
    let from = 0;
    let to = 0;
    try {
      await new Promise((r) => setTimeout(r, 1000));
      from = performance.now();
      proxy.freeze();
      // The beacon needs no database.
      const c = await api(node, "POST", "/v1/collect", { key: site.publishableKey, body: { token: h.body.data.token, session_id: h.body.data.session_id, signals: {} } });
      expect(c.status).toBe(200);
      // What needs the database is refused for a while at most, then served over a new connection:
      // the frozen ones are given up at their deadline, new ones flow.
      await expect.poll(async () => (await resolve()).status, { timeout: 15_000, interval: 250 }).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, 6000 - (performance.now() - from))));
      to = performance.now();
    } finally {
      proxy.thaw();
      await load.stop();
    }
    const during = answersBetween(load, from, to);
    expect(during.length).toBeGreaterThan(100);
    expect(during.filter((s) => s.status !== 200)).toEqual([]);
    expect(percentile(during.map((s) => s.ms), 0.99)).toBeLessThan(100);
  });

  it("+50 ms each way: paid /v1/ip keeps its latency, and the debits keep shipping", async () => {
    const site = await createBeaconProject(node, "pro");
    const load = new IpLoad(() => [node], site.secretKey, 4, { paceMs: 5 });
    let from = 0;
    let to = 0;
    try {
      await new Promise((r) => setTimeout(r, 500));
      proxy.delay(50);
      from = performance.now();
      await new Promise((r) => setTimeout(r, 6000));
      to = performance.now();
    } finally {
      await load.stop();
    }
    const during = answersBetween(load, from, to);
    expect(during.length).toBeGreaterThan(100);
    expect(during.filter((s) => s.status !== 200)).toEqual([]);
    expect(percentile(during.map((s) => s.ms), 0.99)).toBeLessThan(100);
    // The ledger catches up with every answer within a few of its round trips.
    await expect.poll(() => usedOf(node, site.orgId, site.secretKey), { timeout: 5000, interval: 200 }).toBe(load.tally.credits);
    proxy.delay(0);
  });
});
