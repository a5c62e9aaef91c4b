import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { clusterNodeEnv, IpLoad, leasesOf, usedOf } from "./helpers/cluster.js";
import { scaled } from "../helpers/time.js";

/**
 * Issue 26: a node killed under load rejoins on its first start while the others go on loading
 * the same org, and a dead node's credit lease comes back to the org.
 */
const FREE_QUOTA = 10_000;
const LEASE_TTL_MS = 4000;

let db!: TestPostgres;
let url!: string;
const nodes: TestServer[] = [];

beforeAll(async () => {
  db = await startPostgres({ durable: true });
  url = await db.createDatabase("fs_rejoin");
  // The others ship every 5 ms, so a start-up replay races their commits on the same rows; node
  // b ships once a second, so its journal holds a second of charges when it is killed.
  const env = (id: string) => clusterNodeEnv(url, id, { FS_LEASE_TTL_MS: String(LEASE_TTL_MS), FS_LEDGER_FLUSH_MS: id === "b" ? "1000" : "5" });
  nodes.push(await startServer(env("a")));
  const [b, c] = await Promise.all([startServer(env("b"), { demo: nodes[0]!.demo }), startServer(env("c"), { demo: nodes[0]!.demo })]);
  nodes.push(b, c);
}, scaled(180_000));

afterAll(async () => {
  for (const n of nodes) {
    await n.stop().catch(() => {});
    n.cleanup();
  }
  await db?.destroy();
});

/** A free org with `left` credits of its quota left, shipped. */
async function freeOrgWith(left: number): Promise<{ orgId: string; key: string }> {
  const org = await createOrgWithKey(nodes[0]!, "free");
  if (left === FREE_QUOTA) return org;
  expect((await admin(nodes[0]!, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: FREE_QUOTA - left, reason: "test" })).status).toBe(200);
  await expect.poll(() => usedOf(nodes[0]!, org.orgId, org.key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA - left);
  return org;
}

describe("a node rejoining the cluster under load", () => {
  it("kill -9 under load, restart while the others load the same org: starts first time, and the org gets its whole quota", async () => {
    const left = FREE_QUOTA;
    const { orgId, key } = await freeOrgWith(left);
    const live = [0, 1, 2];
    // Paced so that the quota lasts through the restart.
    const load = new IpLoad(() => live.map((i) => nodes[i]!), key, 12, { paceMs: 20 });
    await new Promise((r) => setTimeout(r, 1500));
    live.splice(live.indexOf(1), 1);
    await nodes[1]!.kill9();
    await new Promise((r) => setTimeout(r, 500));
    // Restarted while the others keep shipping charges of the same org: no retry by hand.
    await nodes[1]!.restart();
    live.push(1);
    await new Promise((r) => setTimeout(r, 1000));
    await load.stop();
    // Then until every node refuses: the restarted node's lease came back at its start.
    const rest = new IpLoad(() => nodes, key, 6, { untilRefused: 90 });
    await rest.done;
    const answered = load.tally.credits + rest.tally.credits;
    const killed = load.tally.statuses.get(-1) ?? 0;
    // Calls cut off by the kill may or may not have been charged; none lost, none past the stop.
    await expect.poll(() => usedOf(nodes[0]!, orgId, key), { timeout: scaled(15_000) }).toBeGreaterThanOrEqual(FREE_QUOTA - left + answered);
    const used = await usedOf(nodes[0]!, orgId, key);
    expect(used).toBeLessThanOrEqual(FREE_QUOTA);
    expect(used - (FREE_QUOTA - left) - answered).toBeLessThanOrEqual(killed);
    // The whole quota was served: no credits stranded in a lease.
    expect(used).toBe(FREE_QUOTA);
  });

  it("a node that stays dead: its lease comes back to the org once it expires", async () => {
    const { orgId, key } = await freeOrgWith(2000);
    // Node c takes a lease and spends part of it, ships, and dies.
    const first = new IpLoad(() => [nodes[2]!], key, 2, { paceMs: 2 });
    await new Promise((r) => setTimeout(r, 500));
    await first.stop();
    await expect.poll(() => usedOf(nodes[0]!, orgId, key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA - 2000 + first.tally.credits);
    const held = (await leasesOf(url, orgId)).find((l) => l.node_id === "c")!;
    expect(held.granted).toBeGreaterThan(held.used);
    await nodes[2]!.kill9();
    try {
      // The others serve the org until it is refused everywhere: all of it, c's unspent lease included.
      await new Promise((r) => setTimeout(r, LEASE_TTL_MS));
      const rest = new IpLoad(() => nodes.slice(0, 2), key, 4, { untilRefused: 60 });
      await rest.done;
      expect(first.tally.credits + rest.tally.credits).toBe(2000);
      await expect.poll(() => usedOf(nodes[0]!, orgId, key), { timeout: scaled(10_000) }).toBe(FREE_QUOTA);
    } finally {
      await nodes[2]!.restart();
    }
    // c's start changes nothing: everything it answered was shipped before it died.
    await new Promise((r) => setTimeout(r, 500));
    expect(await usedOf(nodes[2]!, orgId, key)).toBe(FREE_QUOTA);
  });
});
