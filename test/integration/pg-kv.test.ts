import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store/pg/migrate.js";
import { poolReader } from "../../src/store/pg/front-records.js";
import { KvStore } from "../../src/store/pg/kv.js";
import { PgPool } from "../../src/store/pg/pool.js";
import { SyncPg } from "../../src/store/pg/sync-client.js";
import { openPgState, type StateDbs } from "../../src/store/state-env.js";
import { BindingIndex } from "../../src/store/writer/bindings.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { scaled } from "../helpers/time.js";

/** The PostgreSQL key-value tables (src/store/pg/kv.ts) against a real PostgreSQL started here. */
let db!: TestPostgres;
let sql!: SyncPg;
let dbs!: StateDbs;
let url!: string;

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_kv");
  sql = new SyncPg(url, 10_000, "kv-test");
  migrate(sql);
  dbs = openPgState(new KvStore(sql));
}, scaled(120_000));

afterAll(async () => {
  sql?.close();
  await db?.destroy();
});

describe("PostgreSQL key-value tables", () => {
  it("the front's asynchronous reads (poolReader) answer as the synchronous tables do: get, getMany, ranges over several pages, bytes", async () => {
    const pool = new PgPool({ url, timeoutMs: 10_000, name: "kv-test-pool" }, 2);
    try {
      const reads = poolReader(pool);
      dbs.root.transactionSync(() => {
        for (let i = 0; i < 300; i++) dbs.checks.putSync(["org_p", 1000 + i, `r${i}`], { request_id: `r${i}` } as never);
        dbs.checks.putSync(["org_q", 5, "x"], { request_id: "x" } as never);
        dbs.orgModels.putSync("org_p", Buffer.from([1, 2, 3]));
      });
      const all = [...dbs.checks.getRange({ start: ["org_p", Number.MAX_SAFE_INTEGER], end: ["org_p"], reverse: true })];
      expect(all).toHaveLength(300);
      const pooled: typeof all = [];
      for await (const r of reads.range("checks", { start: ["org_p", Number.MAX_SAFE_INTEGER], end: ["org_p"], reverse: true })) pooled.push(r);
      expect(pooled).toEqual(all);
      const forward: typeof all = [];
      for await (const r of reads.range("checks", { start: ["org_p", 1100], end: ["org_p", 1250] })) forward.push(r);
      expect(forward).toEqual([...dbs.checks.getRange({ start: ["org_p", 1100], end: ["org_p", 1250] })]);
      expect(forward).toHaveLength(150);
      // Stopping early stops reading.
      const firstTwo: string[] = [];
      for await (const r of reads.range("checks", { start: ["org_p"] })) if (firstTwo.push(r.value.request_id) === 2) break;
      expect(firstTwo).toEqual(["r0", "r1"]);
      expect(await reads.get("checks", ["org_q", 5, "x"])).toEqual({ request_id: "x" });
      expect(await reads.get("checks", ["org_q", 6, "x"])).toBeUndefined();
      const keys: Array<[string, number, string]> = [["org_p", 1001, "r1"], ["org_q", 1, "none"], ["org_p", 1001, "r1"]];
      expect(await reads.getMany("checks", keys)).toEqual(keys.map((k) => dbs.checks.get(k)));
      expect(Buffer.from((await reads.get("orgModels", "org_p"))!)).toEqual(Buffer.from([1, 2, 3]));
    } finally {
      await pool.close();
    }
  });

  it("readMany answers as get does, key by key: absent keys, repeats, and the open transaction's own writes", () => {
    dbs.root.transactionSync(() => {
      dbs.bindingKeys.putSync(["org", "ip", "a"], { count: 2, rep: "u1" });
      dbs.bindingKeys.putSync(["org", "ip", "b"], { count: 1, rep: "u2" });
      dbs.bindingKeys.putSync(["org", "ip", "c"], { count: 5, rep: "u3" });
    });
    dbs.root.transactionSync(() => {
      dbs.bindingKeys.putSync(["org", "ip", "d"], { count: 7, rep: "u4" }); // pending, not committed
      dbs.bindingKeys.removeSync(["org", "ip", "c"]); // pending removal
      const keys: Array<[string, string, string]> = [["org", "ip", "a"], ["org", "ip", "zz"], ["org", "ip", "b"], ["org", "ip", "a"], ["org", "ip", "c"], ["org", "ip", "d"], ["other", "ip", "a"]];
      const many = dbs.bindingKeys.readMany!(keys);
      expect(many).toEqual(keys.map((k) => dbs.bindingKeys.get(k)));
      expect(many).toEqual([{ count: 2, rep: "u1" }, undefined, { count: 1, rep: "u2" }, { count: 2, rep: "u1" }, undefined, { count: 7, rep: "u4" }, undefined]);
      expect(dbs.bindingKeys.readMany!([])).toEqual([]);
    });
    // Binary values (the meter logs) come back as bytes.
    const log = Buffer.from(new Float64Array([1, 2, 3, 4]).buffer);
    dbs.root.transactionSync(() => dbs.meters.putSync(["org", "a:u1", "api"], log));
    expect(dbs.meters.readMany!([["org", "a:u1", "api"], ["org", "a:u2", "api"]]).map((b) => (b ? Buffer.from(b).equals(log) : b))).toEqual([true, undefined]);
  });

  it("a batch of resolves read ahead in a few statements counts as it does key by key", () => {
    const keyByKey = new BindingIndex(dbs);
    const ahead = new BindingIndex(dbs);
    const requests = Array.from({ length: 24 }, (_, i) => ({
      orgId: "org_r",
      user: `user${i % 9}`,
      session: `s${i % 4}`,
      fingerprint: `f${i % 3}`,
      ip: `ip${i % 5}`,
      prefix: `p${i % 2}`,
      email: i % 2 ? `e${i % 6}` : undefined,
      sharedNetwork: i % 7 === 0,
      nowMs: 1_763_677_180_000 + i,
    }));
    // Each batch in its own transaction, with caches cleared first, as the writer does on PostgreSQL;
    // the same requests against two orgs, one resolved key by key, one read ahead.
    const original = sql.run.bind(sql);
    let statements = 0;
    sql.run = (list) => {
      statements++;
      return original(list);
    };
    const run = (index: BindingIndex, orgId: string, prefetch: boolean) => {
      statements = 0;
      const out: unknown[] = [];
      for (let b = 0; b < requests.length; b += 8) {
        index.reset();
        const batch = requests.slice(b, b + 8).map((r) => ({ ...r, orgId }));
        dbs.root.transactionSync(() => {
          if (prefetch) index.prefetch(batch, []);
          for (const r of batch) out.push(index.resolve(r));
        });
      }
      return { out, statements };
    };
    const read = run(ahead, "org_ahead", true);
    const plain = run(keyByKey, "org_plain", false);
    sql.run = original;
    expect(read.out).toEqual(plain.out);
    // Round trips per batch of 8 (with BEGIN and COMMIT): about 10 read ahead, about 76 key by key.
    expect(read.statements).toBeLessThan(plain.statements / 3);
  });
});
