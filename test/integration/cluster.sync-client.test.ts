import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PgProxy, sqlOn } from "./helpers/faults.js";
import { startPostgres, type TestPostgres } from "./helpers/postgres.js";
import { scaled } from "../helpers/time.js";

/**
 * The synchronous PostgreSQL connection (src/store/pg/sync-client.ts) under link faults, through a
 * TCP proxy (issue 26): a call given up on at its deadline never lets part of its transaction
 * commit, and its connection is not used again.
 */
const REPO = resolve(import.meta.dirname, "../..");
let db!: TestPostgres;
let url!: string;
let proxy!: PgProxy;

beforeAll(async () => {
  db = await startPostgres();
  url = await db.createDatabase("fs_sync_client");
  proxy = await PgProxy.start(db.port);
  await sqlOn(url, "CREATE TABLE t (k text PRIMARY KEY)");
}, scaled(120_000));

afterAll(async () => {
  await proxy?.close();
  await db?.destroy();
});

const rows = async (): Promise<string[]> => (await sqlOn<{ k: string }>(url, "SELECT k FROM t ORDER BY k")).map((r) => r.k);

/**
 * Runs `steps` (the body of an async function given `sql`, a SyncPg on `url`, and `say(msg)` /
 * `hear()` to talk to this thread) on a worker thread: SyncPg blocks its thread while it waits,
 * and the proxy must go on forwarding meanwhile on this one.
 */
function onThread(dbUrl: string, steps: string, onMessage: (msg: string, reply: (m: string) => void) => void): Promise<Record<string, unknown>> {
  const client = pathToFileURL(join(REPO, "dist/src/store/pg/sync-client.js")).href;
  const code = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => {
      const { SyncPg } = await import(${JSON.stringify(client)});
      const sql = new SyncPg(workerData.url, 1000, "sync-test");
      const say = (m) => parentPort.postMessage({ say: m });
      const hear = () => new Promise((r) => parentPort.once("message", r));
      const out = {};
      try { ${steps} } finally { sql.close(); }
      parentPort.postMessage({ done: out });
    })().catch((e) => parentPort.postMessage({ failed: String(e && e.stack || e) }));`;
  const w = new Worker(code, { eval: true, workerData: { url: dbUrl } });
  return new Promise((resolve, reject) => {
    w.on("message", (m: { say?: string; done?: Record<string, unknown>; failed?: string }) => {
      if (m.say !== undefined) onMessage(m.say, (r) => w.postMessage(r));
      else if (m.done) resolve(m.done);
      else reject(new Error(m.failed));
    });
    w.on("error", reject);
  }).finally(() => void w.terminate()) as Promise<Record<string, unknown>>;
}

describe("SyncPg under link faults", () => {
  it("a transaction whose first write stalls past the deadline commits none of its writes", async () => {
    const out = await onThread(
      proxy.url(url),
      `
        out.pid = sql.value("SELECT pg_backend_pid()");
        sql.query("BEGIN");
        say("stall");
        await hear();
        try {
          sql.run([{ sql: "INSERT INTO t VALUES ('first')" }, { sql: "INSERT INTO t VALUES ('second')" }, { sql: "COMMIT" }]);
        } catch (e) {
          out.code = e.code;
          out.unavailable = e.unavailable;
          // What the writer does with a failed transaction.
          try { sql.query("ROLLBACK"); } catch {}
        }
        // Well after the stalled statement reached PostgreSQL.
        await new Promise((r) => setTimeout(r, 3000));
        out.after = sql.value("SELECT pg_backend_pid()");
      `,
      (msg, reply) => {
        if (msg === "stall") proxy.stallOn("'first'", 3000);
        reply("go");
      },
    );
    expect(out.unavailable).toBe(true);
    // Nothing of the transaction committed, and the connection of unknown state was not used again.
    expect(await rows()).toEqual([]);
    expect(out.after).not.toBe(out.pid);
  });
});
