import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { admin, api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { scaled } from "../helpers/time.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { deliver, eventOf, nowSeconds, startStripeServer, stripeEnv, subscriptionObject, TEST_WEBHOOK_SECRET, type TestStripeServer } from "./helpers/stripe-server.js";

/** Billing in a cluster: two nodes on one real PostgreSQL, the real stripe SDK against a local Stripe-compatible server. */
const SECRET = TEST_WEBHOOK_SECRET;
const DAY = 86_400;
let db!: TestPostgres;
let url!: string;
let fake!: TestStripeServer;
const nodes: TestServer[] = [];

function env(id: string): Record<string, string> {
  return stripeEnv(fake.port, { FS_STORE: "postgres", DATABASE_URL: url, FS_NODE_ID: id, FS_CLUSTER_CACHE_MS: "300" });
}

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_cluster_billing");
  fake = await startStripeServer();
  nodes.push(await startServer(env("a")));
  nodes.push(await startServer(env("b"), { demo: nodes[0]!.demo }));
}, scaled(180_000));

afterAll(async () => {
  for (const n of nodes) {
    await n.stop();
    n.cleanup();
  }
  await fake?.close();
  await db?.destroy();
});

async function proOrg(): Promise<{ orgId: string; key: string; customer: string }> {
  const org = await createOrgWithKey(nodes[0]!, "free", ["billing"]);
  const r = await api(nodes[0]!, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { key: org.key, body: { plan: "pro" } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const c = [...fake.customers.values()].find((x) => (x.metadata as Record<string, string>).org_id === org.orgId)!;
  return { ...org, customer: c.id };
}

function subscribed(orgId: string, customer: string) {
  const t0 = nowSeconds();
  const sub = subscriptionObject({ customer, status: "active", items: ["price_pro", "price_pro_overage"], metadata: { org_id: orgId, plan: "pro" }, currentPeriodStart: t0 - DAY, currentPeriodEnd: t0 + 29 * DAY });
  return eventOf("customer.subscription.created", sub, { created: t0 });
}

/** The node whose connection holds the overage reporter's lock. */
async function leaderNode(): Promise<string | null> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query("SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'overage-reporter:%'");
    return r.rows[0] ? String(r.rows[0].application_name).split(":")[1]! : null;
  } finally {
    await c.end();
  }
}

describe("billing in a cluster", () => {
  it("applies a webhook delivered to two nodes at once exactly once", async () => {
    const org = await proOrg();
    const event = subscribed(org.orgId, org.customer);
    const [x, y] = await Promise.all([0, 1].map((j) => deliver(`${nodes[j]!.url}/webhooks/stripe`, event, SECRET))) as [Awaited<ReturnType<typeof deliver>>, Awaited<ReturnType<typeof deliver>>];
    const answers = [JSON.parse(x.body).data, JSON.parse(y.body).data];
    expect([x.status, y.status]).toEqual([200, 200]);
    expect(answers.filter((a) => a.applied === true)).toHaveLength(1);
    expect(answers.filter((a) => a.duplicate === true)).toHaveLength(1);
    for (const n of nodes) expect((await api(n, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.plan).toBe("pro");
  });

  it("one overage reporter in the cluster; when its node is killed another takes over", async () => {
    const org = await proOrg();
    expect((await deliver(`${nodes[1]!.url}/webhooks/stripe`, subscribed(org.orgId, org.customer), SECRET)).status).toBe(200);
    await expect.poll(leaderNode, { timeout: scaled(10_000) }).not.toBeNull();
    const leader = (await leaderNode())!;
    const i = leader === "a" ? 0 : 1;
    // 50,003 credits: 3 past the pro quota, reported by the leader, once.
    expect((await admin(nodes[1 - i]!, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 50_003, reason: "test" })).status).toBe(200);
    await expect.poll(() => fake.meterTotals()[org.customer] ?? 0, { timeout: scaled(10_000) }).toBe(3);
    await nodes[i]!.kill9();
    try {
      await expect.poll(leaderNode, { timeout: scaled(10_000) }).toBe(i === 0 ? "b" : "a");
      expect((await admin(nodes[1 - i]!, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 4, reason: "test" })).status).toBe(200);
      await expect.poll(() => fake.meterTotals()[org.customer] ?? 0, { timeout: scaled(10_000) }).toBe(7);
    } finally {
      await nodes[i]!.restart();
    }
    // Rounds after the restart report only what is new: one more credit makes 8.
    expect((await admin(nodes[1 - i]!, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 1, reason: "test" })).status).toBe(200);
    await expect.poll(() => fake.meterTotals()[org.customer] ?? 0, { timeout: scaled(20_000) }).toBe(8);
    const usage = async () => (await api(nodes[i]!, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data;
    await expect.poll(usage, { timeout: scaled(20_000) }).toMatchObject({ overage: 8, overage_reported: 8, overage_pending: 0 });
  });
});
