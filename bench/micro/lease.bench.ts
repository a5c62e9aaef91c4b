/**
 * What credit leases add to a free-plan admission in a cluster (FS_STORE=postgres, docs/cluster.md):
 * QuotaGate.hold + charge, the front's admission, for 1-credit calls of free orgs, with leases
 * from a real PostgreSQL (durable commits, migrated schema, `fs_lease_grant` through the front's
 * asynchronous pool, topped up below a quarter of FS_LEASE_CREDITS) and without (the embedded
 * store's gate: a counter). A call that finds the lease empty waits for a grant (StoreWait, the
 * time counted); the others admit locally. Per-call times: p50, p99, p99.9, max, and how many
 * calls waited.
 *
 *   node dist/bench/micro/lease.bench.js
 *
 * Also the grant alone (one round trip through the pool), and a plain `SELECT 1` through the
 * same pool for the round trip's floor. Needs PostgreSQL's programs (Debian's
 * `postgresql`); without them it says so and measures nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChargeJournal } from "../../src/store/charge-journal.js";
import { QuotaGate, type LeaseSource } from "../../src/front/quota.js";
import { KvStore } from "../../src/store/pg/kv.js";
import { ClusterLeases, LeaseClock } from "../../src/store/pg/leases.js";
import { PgPool } from "../../src/store/pg/pool.js";
import { StoreWait } from "../../src/store/store-wait.js";
import { migrate } from "../../src/store/pg/migrate.js";
import { SyncPg } from "../../src/store/pg/sync-client.js";
import { openPgState } from "../../src/store/state-env.js";
import { usagePeriod } from "../../src/shared/billing-period.js";
import { postgresBinDir, startPostgres } from "../lib/postgres.js";
import { machineLine } from "../lib/context.js";

const ORGS = 8;
const CALLS_PER_ORG = 9_000;
const LEASE_CREDITS = 1000;

function percentiles(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const us = (ms: number): string => `${(ms * 1000).toFixed(2)} µs`;
  return `p50 ${us(at(0.5))}  p99 ${us(at(0.99))}  p99.9 ${us(at(0.999))}  max ${us(s[s.length - 1]!)}  (n=${s.length})`;
}

async function main(): Promise<void> {
  console.log(machineLine());
  try {
    postgresBinDir();
  } catch (err) {
    console.log(`not measured: ${(err as Error).message}`);
    return;
  }
  const pg = await startPostgres({ durable: true });
  const dir = mkdtempSync(join(tmpdir(), "fs-lease-bench-"));
  try {
    const url = await pg.createDatabase("fs_lease_bench");
    const sql = new SyncPg(url, 5000, "lease-bench");
    migrate(sql);
    const kv = new KvStore(sql);
    const dbs = openPgState(kv);
    const now = Date.now();
    const orgIds = Array.from({ length: ORGS }, (_, i) => `org_bench_${i}`);
    kv.transactionSync(() => {
      for (const id of orgIds) dbs.orgs.putSync(id, { id, name: id, plan: "free", subscription_status: "active", trial_end: null, created_at: new Date(now).toISOString() });
    });

    // The round trip's floor, and a grant alone.
    const pool = new PgPool({ url, timeoutMs: 5000, name: "lease-bench" }, 2);
    const rt: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = performance.now();
      await pool.query("SELECT 1");
      rt.push(performance.now() - t);
    }
    console.log(`pool round trip (SELECT 1)         ${percentiles(rt)}`);
    const period = usagePeriod({ billing_period_start: null, billing_period_end: null }, now).id;
    const clock = new LeaseClock(LeaseClock.allocate());
    clock.set(now, now + 3_600_000);
    const grantsOnly = new ClusterLeases(pool, "bench-grants", clock, 60_000, LEASE_CREDITS);
    const grants: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      await grantsOnly.grant(`org_grant_${i}`, period, 10_000, 1);
      grants.push(performance.now() - t);
    }
    console.log(`lease grant (fs_lease_grant)       ${percentiles(grants)}`);

    // Admission: the same gate, with and without leases, interleaved by org.
    const cluster = new ClusterLeases(pool, "bench", clock, 60_000, LEASE_CREDITS);
    const leases: LeaseSource = { chain: () => cluster.chain(), grant: (o, p, q, n) => cluster.grant(o, p, q, n), lowWater: cluster.lowWater };
    const journal = new ChargeJournal(join(dir, "journal"), 0, () => {});
    const withLeases = new QuotaGate(dbs, journal, leases);
    const alone = new QuotaGate(dbs, journal, null);
    const leased: number[] = [];
    const local: number[] = [];
    let waited = 0;
    const noop = (): void => {};
    // One call: admitted at once, or after waiting for a grant as the router does.
    const admit = async (gate: QuotaGate, orgId: string): Promise<void> => {
      for (;;) {
        try {
          const h = gate.hold(orgId, 1, now);
          gate.charge(orgId, 1, now, false, noop, h);
          return;
        } catch (err) {
          if (!(err instanceof StoreWait)) throw err;
          waited++;
          await err.ready;
        }
      }
    };
    for (let round = 0; round < CALLS_PER_ORG / 1000; round++) {
      for (const orgId of orgIds) {
        for (const [gate, out] of [[withLeases, leased], [alone, local]] as const) {
          for (let i = 0; i < 1000; i++) {
            const t = performance.now();
            await admit(gate, orgId);
            out.push(performance.now() - t);
          }
        }
        await new Promise((r) => setImmediate(r)); // let the journal write what was charged
      }
    }
    console.log(`admission, 1 credit, no lease      ${percentiles(local)}`);
    console.log(`admission, 1 credit, leases of ${LEASE_CREDITS} ${percentiles(leased)}  waited for a grant: ${waited}`);
    journal.close();
    await pool.close();
    sql.close();
  } finally {
    await pg.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
