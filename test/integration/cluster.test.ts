import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { admin, api, createBeaconProject, createOrgWithKey, startServer, type ApiResponse, type TestServer } from "./helpers/server.js";
import { scaled } from "../helpers/time.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";

/**
 * Three service nodes on loopback ports sharing one real PostgreSQL (FS_STORE=postgres), each
 * with its own DATA_DIR (journals) and FS_NODE_ID.
 */
const FREE_QUOTA = 10_000;

let db!: TestPostgres;
let url!: string;
const nodes: TestServer[] = [];
const nodeEnv = (id: string): Record<string, string> => ({
  FS_STORE: "postgres",
  DATABASE_URL: url,
  FS_NODE_ID: id,
  FS_CLUSTER_CACHE_MS: "300",
  FS_LEASE_CREDITS: "200",
  FS_ENABLE_METER: "true",
  FS_TRUSTED_PROXIES: "127.0.0.1,::1",
});

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_cluster");
  nodes.push(await startServer(nodeEnv("a")));
  // The first node printed the demo account; the others start on the same database.
  const [b, c] = await Promise.all([startServer(nodeEnv("b"), { demo: nodes[0]!.demo }), startServer(nodeEnv("c"), { demo: nodes[0]!.demo })]);
  nodes.push(b, c);
}, scaled(180_000));

afterAll(async () => {
  for (const n of nodes) {
    await n.stop();
    n.cleanup();
  }
  await db?.destroy();
});

async function sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Credits the shared ledger holds for the org this period (any node answers the same). */
async function usedOf(orgId: string, key: string, node = 0): Promise<number> {
  const res = await api(nodes[node]!, "GET", `/v1/orgs/${orgId}/usage`, { key });
  if (res.status !== 200) throw new Error(`usage: ${res.status} ${JSON.stringify(res.body.error)}`);
  return res.body.data.used as number;
}

/** GET /v1/ip on node `i` with `key`: the status. */
async function ipCall(i: number, key: string): Promise<number> {
  const res = await fetch(`${nodes[i % nodes.length]!.url}/v1/ip/8.8.8.8`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

describe("a cluster of three nodes on PostgreSQL", () => {
  it("shares orgs and keys: a key made on one node works on every node", async () => {
    const { key } = await createOrgWithKey(nodes[0]!, "pro");
    for (let i = 0; i < 3; i++) expect(await ipCall(i, key)).toBe(200);
    // The demo account from the first start is known to every node.
    for (const n of nodes) expect((await api(n, "GET", "/v1/ip/1.1.1.1", { key: n.demo.secretKey })).status).toBe(200);
  });

  it("stops a free org at exactly its quota, with calls spread over the nodes", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[1]!, "free");
    // Most of the quota used up front (an operator's adjustment on another node), so the race is short.
    const pre = FREE_QUOTA - 600;
    expect((await admin(nodes[2]!, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: pre, reason: "test" })).status).toBe(200);
    // An adjustment is not an admission: wait until it is shipped before the calls race.
    await expect.poll(() => usedOf(orgId, key), { timeout: scaled(10_000) }).toBe(pre);
    let ok = 0;
    let refused = 0;
    let attempted = 0;
    let streak = 0;
    // 24 callers at once, round robin over the nodes, until every node refuses for a while.
    while (streak < 60) {
      const statuses = await Promise.all(Array.from({ length: 24 }, (_, j) => ipCall(attempted + j, key)));
      attempted += statuses.length;
      for (const s of statuses) {
        if (s === 200) ok++;
        else if (s === 429) refused++;
        else throw new Error(`unexpected status ${s}`);
      }
      streak = statuses.every((s) => s === 429) ? streak + statuses.length : 0;
    }
    expect(attempted).toBeGreaterThan(600);
    expect(refused).toBeGreaterThan(0);
    expect(ok).toBe(600);
    // The shipped ledger agrees (shipping trails answers by FS_LEDGER_FLUSH_MS).
    await expect.poll(() => usedOf(orgId, key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA);
  });

  it("refuses a key disabled on one node on every other node within the cache bound", async () => {
    const { key, keyId } = await createOrgWithKey(nodes[0]!, "pro");
    for (let i = 0; i < 3; i++) expect(await ipCall(i, key)).toBe(200);
    expect((await admin(nodes[0]!, "POST", `/v1/admin/keys/${keyId}/disable`)).status).toBe(200);
    for (const i of [1, 2]) await expect.poll(() => ipCall(i, key), { timeout: scaled(5000), interval: 50 }).toBe(403);
  });

  it("shares an org's feedback: a check answered on one node, labelled on another, moves the org's verdicts on every node and no other org's", async () => {
    const a = await createOrgWithKey(nodes[0]!, "pro");
    const b = await createOrgWithKey(nodes[0]!, "pro");
    const pitch = "Hello, we supply premium bamboo flooring and decking for hotels and offices at factory prices. Reply to this message for our catalogue and a free sample pack.";
    const similar = "Dear manager, we offer premium bamboo flooring and decking at factory prices for hotels and offices. Reply for a free sample pack and our catalogue.";
    const check = async (node: number, key: string, message: string): Promise<{ requestId: string; p: number }> => {
      const r = await api(nodes[node]!, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { name: "Li Wei", message } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { requestId: r.body.metadata.request_id as string, p: r.body.data.signals.content.spam_probability as number };
    };
    const before = await check(2, a.key, similar);
    const first = await check(0, a.key, pitch);
    // The check's history record reaches PostgreSQL with the node's ledger batch; then node b can name it.
    const label = async (): Promise<number> => (await api(nodes[1]!, "POST", "/v1/feedback", { key: a.key, body: { label: "spam", request_id: first.requestId } })).status;
    await expect.poll(label, { timeout: scaled(10_000), interval: 100 }).toBe(200);
    // Node c uses the org's model within the cache bound; org b keeps the global verdict.
    await expect.poll(async () => (await check(2, a.key, similar)).p, { timeout: scaled(10_000), interval: 100 }).toBeGreaterThan(before.p);
    expect((await check(2, b.key, similar)).p).toBe(before.p);
    const figures = await api(nodes[2]!, "GET", `/v1/orgs/${a.orgId}/feedback`, { key: a.key });
    expect(figures.body.data).toMatchObject({ model_version: 1, feedback: { spam: 1, ham: 0 } });
  });

  it("counts distinct accounts and meter budgets exactly with callers on different nodes", async () => {
    const site = await createBeaconProject(nodes[0]!, "pro");
    // Six accounts sign up on one session at once, two per node: the counts they see are 0..5, each once.
    const resolves = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api(nodes[i % 3]!, "POST", "/v1/sessions/resolve", { key: site.secretKey, body: { observation_type: "auth.signup", external_user_id: `user-${i}`, session_id: "s_shared_cluster_session_1", ip: "73.15.20.30" } }),
      ),
    );
    expect(resolves.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(resolves.map((r) => r.body.data.correlation.accounts_sharing_session).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    // 30 meter calls at once against max 7, spread over the nodes: exactly 7 allowed.
    const meters = await Promise.all(
      Array.from({ length: 30 }, (_, i) => api(nodes[i % 3]!, "POST", "/v1/meter", { key: site.secretKey, body: { resource: "api/search", identity: { user_id: "u-cluster" }, limit: { max: 7, window: "1h" } } })),
    );
    expect(meters.every((m) => m.status === 200)).toBe(true);
    expect(meters.filter((m) => m.body.data.action === "allow")).toHaveLength(7);
  });

  it("kill -9 of a node mid-load, then restart: never over quota, nothing answered lost", async () => {
    const { orgId, key } = await createOrgWithKey(nodes[0]!, "free");
    const pre = FREE_QUOTA - 900;
    expect((await admin(nodes[0]!, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: pre, reason: "test" })).status).toBe(200);
    await expect.poll(() => usedOf(orgId, key), { timeout: scaled(10_000) }).toBe(pre);
    let answered = 0;
    let attempted = 0;
    const round = async (targets: number[]): Promise<number[]> => {
      const statuses = await Promise.all(
        Array.from({ length: 24 }, (_, j) => ipCall(targets[(attempted + j) % targets.length]!, key).catch(() => -1)),
      );
      attempted += statuses.length;
      answered += statuses.filter((s) => s === 200).length;
      return statuses;
    };
    for (let r = 0; r < 5; r++) await round([0, 1, 2]);
    // Node b dies with calls in flight and credits of its lease unspent.
    const inFlight = round([1, 1, 0, 2]);
    await nodes[1]!.kill9();
    await inFlight;
    for (let r = 0; r < 5; r++) await round([0, 2]);
    await nodes[1]!.restart();
    // Until every node refuses: b's replayed charges ship and its unused lease comes back.
    let streak = 0;
    while (streak < 60) {
      const statuses = await round([0, 1, 2]);
      streak = statuses.every((s) => s === 429) ? streak + statuses.length : 0;
    }
    await expect.poll(() => usedOf(orgId, key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA);
    expect(answered).toBeLessThanOrEqual(FREE_QUOTA - pre);
    expect(answered).toBeGreaterThan(0);
    expect(attempted).toBeGreaterThan(FREE_QUOTA - pre);
    // Ledger and leases agree: every node's lease is down to what it shipped.
    const leases = await sql<{ granted: string; used: string }>("SELECT granted, used FROM fs_leases WHERE org_id = $1", [orgId]);
    const used = leases.reduce((n, l) => n + Number(l.used), 0);
    expect(used).toBe(FREE_QUOTA - pre);
  });

  it("PostgreSQL stopped mid-load: paid plans and the beacon go on, free orgs spend their lease then 503, resolve 503; all catches up after", async () => {
    const paid = await createBeaconProject(nodes[0]!, "pro");
    const free = await createOrgWithKey(nodes[0]!, "free");
    // Both orgs seen on node a before the outage (keys cached; the free org holds a lease).
    expect(await ipCall(0, paid.secretKey)).toBe(200);
    expect(await ipCall(0, free.key)).toBe(200);
    const h = await api(nodes[0]!, "POST", "/v1/handshake", { key: paid.publishableKey, body: {} });
    expect(h.status).toBe(200);
    // The first charges shipped: another node reads them from PostgreSQL.
    await expect.poll(() => usedOf(paid.orgId, paid.secretKey, 1), { timeout: scaled(20_000) }).toBe(1 + Number(h.body.metadata.credits ?? 0));
    await expect.poll(() => usedOf(free.orgId, free.key, 1), { timeout: scaled(20_000) }).toBe(1);
    await db.stop("immediate");
    // Credits the paid org was answered for: one /v1/ip call, the handshake, then what follows.
    let paidCredits = 1 + Number(h.body.metadata.credits ?? 0);
    try {
      for (let i = 0; i < 50; i++) {
        expect(await ipCall(0, paid.secretKey)).toBe(200);
        paidCredits++;
      }
      // The free org spends what its lease holds (at most FS_LEASE_CREDITS), then 503 with Retry-After.
      let freeOk = 0;
      let last: Response | null = null;
      for (let i = 0; i < 400; i++) {
        last = await fetch(`${nodes[0]!.url}/v1/ip/8.8.8.8`, { headers: { authorization: `Bearer ${free.key}` } });
        await last.arrayBuffer();
        if (last.status !== 200) break;
        freeOk++;
      }
      expect(freeOk).toBeLessThan(200);
      expect(last!.status).toBe(503);
      expect(last!.headers.get("retry-after")).toBe("1");
      // Resolve needs a committed binding: 503, uncharged.
      const r = await api(nodes[0]!, "POST", "/v1/sessions/resolve", { key: paid.secretKey, body: { observation_type: "auth.login", external_user_id: "u-1", session_id: h.body.data.session_id } });
      expect(r.status).toBe(503);
      // The beacon is never refused.
      const c = await api(nodes[0]!, "POST", "/v1/collect", { key: paid.publishableKey, body: { token: h.body.data.token, session_id: h.body.data.session_id, signals: {} } });
      expect(c.status).toBe(200);
      paidCredits += Number(c.body.metadata.credits ?? 0);
    } finally {
      await db.start();
    }
    // Catch-up: the paid org's debits waited in the journal and are all in the ledger now.
    await expect.poll(() => usedOf(paid.orgId, paid.secretKey), { timeout: scaled(20_000) }).toBe(paidCredits);
  });

  it("lists the observations of every node together, newest first, in pages", async () => {
    const site = await createBeaconProject(nodes[0]!, "pro");
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await api(nodes[i % 3]!, "POST", "/v1/collect", { key: site.publishableKey, body: { action: `a${i}`, page: "/" } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.data.observation_id);
    }
    // Listed on one node once shipped (FS_LEDGER_FLUSH_MS): all six, in the order they were made.
    const list = async (): Promise<string[]> => {
      const seen: string[] = [];
      let cursor: string | null = "";
      while (cursor !== null) {
        const r: ApiResponse = await api(nodes[2]!, "GET", `/v1/projects/${site.projectId}/observations?limit=4${cursor ? `&cursor=${cursor}` : ""}`, { key: site.secretKey });
        expect(r.status).toBe(200);
        seen.push(...r.body.data.items.map((o: { id: string }) => o.id));
        cursor = r.body.data.next_cursor;
      }
      return seen;
    };
    await expect.poll(list, { timeout: scaled(10_000) }).toEqual([...ids].reverse());
  });

  it("keeps every node's progress and leases in PostgreSQL", async () => {
    const rows = await sql<{ node_id: string }>("SELECT node_id FROM fs_nodes ORDER BY node_id");
    expect(rows.map((r) => r.node_id)).toEqual(["a", "b", "c"]);
    const versions = await sql<{ version: number }>("SELECT version FROM fs_schema_migrations");
    expect(versions.length).toBeGreaterThan(0);
  });
});
