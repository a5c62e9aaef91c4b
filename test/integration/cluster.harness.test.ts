import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { loseSyncStandby, PgProxy, slowCommit, slowUpsert, sqlOn } from "./helpers/faults.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { scaled } from "../helpers/time.js";

/** The fault-injection harness itself (helpers/faults.ts), against a real PostgreSQL. */
let db!: TestPostgres;
let url!: string;
let proxy!: PgProxy;

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_harness");
  proxy = await PgProxy.start(db.port);
  await sqlOn(url, "CREATE TABLE t (k int PRIMARY KEY, v int)");
}, scaled(120_000));

afterAll(async () => {
  await proxy?.close();
  await db?.destroy();
});

async function client(statementTimeoutMs = 0): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: proxy.url(url), statement_timeout: statementTimeoutMs || undefined });
  c.on("error", () => {});
  await c.connect();
  return c;
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await f();
  return { ms: performance.now() - t, value };
}

describe("fault-injection harness", () => {
  it("passes a connection through, and delays it", async () => {
    const c = await client();
    try {
      expect((await c.query("SELECT 1 AS one")).rows[0].one).toBe(1);
      proxy.delay(50);
      const { ms } = await timed(() => c.query("SELECT 1"));
      expect(ms).toBeGreaterThanOrEqual(95);
    } finally {
      proxy.delay(0);
      await c.end();
    }
  });

  it("stalls the open connections for a while, then delivers what they held", async () => {
    const c = await client();
    try {
      const stalled = proxy.stall(600);
      const { ms, value } = await timed(() => c.query("SELECT 2 AS two"));
      await stalled;
      expect(value.rows[0].two).toBe(2);
      expect(ms).toBeGreaterThanOrEqual(550);
    } finally {
      await c.end();
    }
  });

  it("stalls the connection that sends a given text", async () => {
    const c = await client();
    try {
      proxy.stallOn("fs_marker_x", 500);
      expect((await timed(() => c.query("SELECT 3"))).ms).toBeLessThan(400);
      expect((await timed(() => c.query("SELECT 'fs_marker_x'"))).ms).toBeGreaterThanOrEqual(450);
    } finally {
      await c.end();
    }
  });

  it("freezes the open connections until thawed; new connections flow; a close is heard only after the thaw", async () => {
    const c = await client();
    const pid = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    proxy.freeze();
    let done = false;
    const q = c.query("SELECT 4 AS four").then((r) => {
      done = true;
      return r;
    });
    const fresh = await client();
    expect((await fresh.query("SELECT 5 AS five")).rows[0].five).toBe(5);
    await fresh.end();
    expect(done).toBe(false);
    proxy.thaw();
    expect((await q).rows[0].four).toBe(4);
    const direct = new pg.Client({ connectionString: url });
    await direct.connect();
    // A client that closes while frozen: the backend lives on until the link flows.
    proxy.freeze();
    const closed = c.end();
    await new Promise((r) => setTimeout(r, 300));
    expect((await direct.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1", [pid])).rows[0].n).toBe(1);
    proxy.thaw();
    await closed;
    await expect.poll(async () => (await direct.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1", [pid])).rows[0].n).toBe(0);
    await direct.end();
  });

  it("slows a COMMIT past the statement timeout, and an upsert within it", async () => {
    const undoCommit = await slowCommit(url, 0.6, ["t"]);
    const undoUpsert = await slowUpsert(url, "t", 0.3);
    const c = await client(200);
    try {
      await c.query("BEGIN");
      const upsert = await timed(() => c.query("INSERT INTO t VALUES (1, 1) ON CONFLICT (k) DO UPDATE SET v = t.v + 1").catch((e: Error) => e));
      // The upsert's sleep counts against the statement timeout (200 ms): refused.
      expect(upsert.value).toBeInstanceOf(Error);
      await c.query("ROLLBACK");
      await c.query("SET statement_timeout = 1000");
      await c.query("BEGIN");
      await c.query("INSERT INTO t VALUES (2, 1)");
      await c.query("SET LOCAL statement_timeout = 100");
      const commit = await timed(() => c.query("COMMIT"));
      expect(commit.ms).toBeGreaterThanOrEqual(550);
    } finally {
      await c.end();
      await undoCommit();
      await undoUpsert();
    }
    expect(await sqlOn(url, "SELECT k FROM t ORDER BY k")).toEqual([{ k: 2 }]);
  });

  it("a missing synchronous standby holds durable commits; one given up on was committed all the same", async () => {
    const c = await client();
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    const undo = await loseSyncStandby(url);
    try {
      const pid = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      let acknowledged = false;
      const commit = c.query("INSERT INTO t VALUES (3, 1)").then(() => (acknowledged = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(acknowledged).toBe(false);
      // A client that gives up cancels the wait: the commit is not undone, and is seen at once.
      await watcher.query("SELECT pg_cancel_backend($1)", [pid]);
      await commit;
      expect((await watcher.query("SELECT count(*)::int AS n FROM t WHERE k = 3")).rows[0].n).toBe(1);
      // Held again until the standby is back.
      acknowledged = false;
      const next = c.query("INSERT INTO t VALUES (4, 1)").then(() => (acknowledged = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(acknowledged).toBe(false);
      await undo();
      await next;
    } finally {
      await undo();
      await c.end();
      await watcher.end();
    }
  });
});
