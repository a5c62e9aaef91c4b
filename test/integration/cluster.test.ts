import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { admin, api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
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
});

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_cluster");
  nodes.push(await startServer(nodeEnv("a")));
  // The first node printed the demo account; the others start on the same database.
  const [b, c] = await Promise.all([startServer(nodeEnv("b"), { demo: nodes[0]!.demo }), startServer(nodeEnv("c"), { demo: nodes[0]!.demo })]);
  nodes.push(b, c);
}, 180_000);

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
    await expect.poll(() => usedOf(orgId, key), { timeout: 10_000 }).toBe(pre);
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
    await expect.poll(() => usedOf(orgId, key), { timeout: 10_000 }).toBe(FREE_QUOTA);
  });

  it("refuses a key disabled on one node on every other node within the cache bound", async () => {
    const { key, keyId } = await createOrgWithKey(nodes[0]!, "pro");
    for (let i = 0; i < 3; i++) expect(await ipCall(i, key)).toBe(200);
    expect((await admin(nodes[0]!, "POST", `/v1/admin/keys/${keyId}/disable`)).status).toBe(200);
    for (const i of [1, 2]) await expect.poll(() => ipCall(i, key), { timeout: 5000, interval: 50 }).toBe(403);
  });

  it("keeps every node's progress and leases in PostgreSQL", async () => {
    const rows = await sql<{ node_id: string }>("SELECT node_id FROM fs_nodes ORDER BY node_id");
    expect(rows.map((r) => r.node_id)).toEqual(["a", "b", "c"]);
    const versions = await sql<{ version: number }>("SELECT version FROM fs_schema_migrations");
    expect(versions.length).toBeGreaterThan(0);
  });
});
