import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { loseSyncStandby, PgProxy, slowCommit, slowUpsert } from "./helpers/faults.js";
import { clusterNodeEnv, IpLoad, leasesOf, usedOf } from "./helpers/cluster.js";
import { deliver, eventOf, nowSeconds, startStripeServer, stripeEnv, subscriptionObject, TEST_WEBHOOK_SECRET, type TestStripeServer } from "./helpers/stripe-server.js";
import { scaled } from "../helpers/time.js";

/**
 * Issue 26: faults on the database link of one node (a TCP proxy between node `a` and
 * PostgreSQL), slow commits and upserts, a lost synchronous standby. Node `b` reaches PostgreSQL
 * directly. Whatever the fault, the ledger holds exactly the credits the answers stated, the free
 * plan stops at its quota, and a webhook is applied once with its event id.
 */
const FREE_QUOTA = 10_000;

let db!: TestPostgres;
let url!: string;
let proxy!: PgProxy;
let fake!: TestStripeServer;
const nodes: TestServer[] = [];

beforeAll(async () => {
  // fsync on, as in production: a commit's outcome takes the time it takes.
  db = await startPostgres({ durable: true });
  url = await db.createDatabase("fs_faults");
  proxy = await PgProxy.start(db.port);
  fake = await startStripeServer();
  const env = (id: string, dbUrl: string) => stripeEnv(fake.port, clusterNodeEnv(dbUrl, id, { FS_PG_TIMEOUT_MS: "1000" }));
  nodes.push(await startServer(env("a", proxy.url(url))));
  nodes.push(await startServer(env("b", url), { demo: nodes[0]!.demo }));
}, scaled(180_000));

afterAll(async () => {
  for (const n of nodes) {
    await n.stop();
    n.cleanup();
  }
  await fake?.close();
  await proxy?.close();
  await db?.destroy();
});

/** Stalls node a's link `times` times for `ms`, with `gapMs` between, while `busy()` holds. */
async function stalls(times: number, ms: number, gapMs: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await proxy.stall(ms);
    await new Promise((r) => setTimeout(r, gapMs));
  }
}

/** Waits until the shared ledger holds `credits` for the org, and fails if it ever holds more. */
async function ledgerSettlesAt(orgId: string, key: string, credits: number): Promise<void> {
  await expect.poll(() => usedOf(nodes[1]!, orgId, key), { timeout: scaled(30_000), interval: 250 }).toBeGreaterThanOrEqual(credits);
  // Nothing more arrives later (a resend of a commit that had succeeded would).
  await new Promise((r) => setTimeout(r, 2500));
  expect(await usedOf(nodes[1]!, orgId, key)).toBe(credits);
  expect(await usedOf(nodes[0]!, orgId, key)).toBe(credits);
}

describe("faults on one node's database link", () => {
  it("COMMIT slowed 0.5 s plus link stalls of 2.3 s: the ledger holds exactly the credits answered", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[0]!, "pro");
    const undo = await slowCommit(url, 0.5, ["fs_meta", "fs_usage"]);
    const load = new IpLoad(() => nodes, key, 6, { paceMs: 5 });
    try {
      await stalls(4, 2300, 700);
    } finally {
      await load.stop();
      await undo();
    }
    expect(load.tally.ok()).toBeGreaterThan(100);
    expect(load.tally.statuses.get(-1) ?? 0).toBe(0);
    await ledgerSettlesAt(orgId, key, load.tally.credits);
  });

  it("usage upsert slowed 0.5 s plus stalls, free org: never past the hard stop, leases consistent", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[1]!, "free");
    const left = 1500;
    expect((await admin(nodes[1]!, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: FREE_QUOTA - left, reason: "test" })).status).toBe(200);
    await expect.poll(() => usedOf(nodes[1]!, orgId, key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA - left);
    const undo = await slowUpsert(url, "fs_usage", 0.5);
    // The load on the node whose link fails: its shipping and its grants meet the faults.
    const load = new IpLoad(() => [nodes[0]!], key, 4, { paceMs: 10 });
    try {
      await stalls(4, 2300, 700);
    } finally {
      await undo();
    }
    // Then until every node refuses.
    await Promise.race([load.done, new Promise((r) => setTimeout(r, 20_000))]);
    const refusing = new IpLoad(() => nodes, key, 4, { untilRefused: 60 });
    await refusing.done;
    await load.stop();
    const answered = load.tally.credits + refusing.tally.credits;
    expect(answered).toBeLessThanOrEqual(left);
    await ledgerSettlesAt(orgId, key, FREE_QUOTA - left + answered);
    // Each node's lease: what it shipped never exceeds what it was granted.
    for (const l of await leasesOf(url, orgId)) expect(l.used, l.node_id).toBeLessThanOrEqual(l.granted);
    expect((await leasesOf(url, orgId)).reduce((n, l) => n + l.used, 0)).toBe(answered);
  });

  it("the synchronous standby missing twice for 3 s: the ledger holds exactly the credits answered", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[0]!, "pro");
    const load = new IpLoad(() => nodes, key, 6, { paceMs: 5 });
    try {
      for (let i = 0; i < 2; i++) {
        await new Promise((r) => setTimeout(r, 700));
        const back = await loseSyncStandby(url);
        await new Promise((r) => setTimeout(r, 3000));
        await back();
      }
    } finally {
      await load.stop();
    }
    expect(load.tally.ok()).toBeGreaterThan(100);
    await ledgerSettlesAt(orgId, key, load.tally.credits);
  });

  it("while a node's debits cannot commit, /usage on it says how far it is behind; then it catches up", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[0]!, "pro");
    // Every commit that moves a cursor takes 3 s, past the 1 s timeout: shipping fails, reads go on.
    const undo = await slowCommit(url, 3, ["fs_meta"]);
    const load = new IpLoad(() => [nodes[0]!], key, 4, { paceMs: 5 });
    const behind = async (): Promise<{ records: number; seconds: number } | null> =>
      (await api(nodes[0]!, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.behind;
    try {
      await expect.poll(async () => (await behind())?.records ?? 0, { timeout: scaled(20_000), interval: 500 }).toBeGreaterThan(0);
      expect((await behind())?.seconds).toBeGreaterThanOrEqual(1);
    } finally {
      await load.stop();
      await undo();
    }
    await ledgerSettlesAt(orgId, key, load.tally.credits);
    expect(await behind()).toBeNull();
  });

  it("a Stripe upgrade whose commit stalls: applied once, with its event id, also after the redelivery", async () => {
    const org = await createOrgWithKey(nodes[0]!, "free", ["billing"]);
    const r = await api(nodes[0]!, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const customer = [...fake.customers.values()].find((x) => (x.metadata as Record<string, string>).org_id === org.orgId)!.id;
    const t0 = nowSeconds();
    const sub = subscriptionObject({ customer, status: "active", items: ["price_pro", "price_pro_overage"], metadata: { org_id: org.orgId, plan: "pro" }, currentPeriodStart: t0 - 86_400, currentPeriodEnd: t0 + 29 * 86_400 });
    const event = eventOf("customer.subscription.created", sub, { created: t0 });
    const undo = await slowUpsert(url, "fs_orgs", 0.5);
    // The upsert of the org, in node a's writer transaction, is held past the client's deadline.
    proxy.stallOn("INSERT INTO fs_orgs", 2600);
    let first: Awaited<ReturnType<typeof deliver>>;
    try {
      first = await deliver(`${nodes[0]!.url}/webhooks/stripe`, event, TEST_WEBHOOK_SECRET);
    } finally {
      await new Promise((r) => setTimeout(r, 3000)); // the stalled statements reach PostgreSQL
      await undo();
    }
    // Stripe delivers again until it gets a 200.
    let second = await deliver(`${nodes[0]!.url}/webhooks/stripe`, event, TEST_WEBHOOK_SECRET);
    for (let i = 0; i < 20 && second.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 500));
      second = await deliver(`${nodes[0]!.url}/webhooks/stripe`, event, TEST_WEBHOOK_SECRET);
    }
    expect(second.status).toBe(200);
    const answers = [first, second].filter((d) => d.status === 200).map((d) => JSON.parse(d.body).data as { applied: boolean; duplicate: boolean });
    // At most one delivery applied it (the first may have committed without hearing so); any other is a duplicate.
    expect(answers.filter((a) => a.applied).length).toBeLessThanOrEqual(1);
    expect(answers.filter((a) => !a.applied).every((a) => a.duplicate)).toBe(true);
    for (const n of nodes) await expect.poll(async () => (await api(n, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.plan, { timeout: scaled(5000) }).toBe("pro");
  });
});
