/**
 * The thread behind SyncPg (sync-client.ts): one PostgreSQL connection, driven by the `pg`
 * client, answering one request at a time. Each answer is posted on the port, then the shared
 * flag is raised so the caller, blocked in Atomics.wait, wakes and reads it.
 */
import { workerData, type MessagePort } from "node:worker_threads";
import pg from "pg";
import type { BridgeData, BridgeRequest, BridgeResponse } from "./sync-protocol.js";

const data = workerData as BridgeData;
const port: MessagePort = data.port;
const flag = new Int32Array(data.flag);

let client: pg.Client | null = null;
let broken = false;

async function connection(): Promise<pg.Client> {
  if (client && !broken) return client;
  if (client) void client.end().catch(() => {});
  broken = false;
  const c = new pg.Client({
    connectionString: data.url,
    connectionTimeoutMillis: data.timeoutMs,
    statement_timeout: data.timeoutMs,
    application_name: data.name,
  });
  c.on("error", () => {
    broken = true;
  });
  client = c;
  try {
    await c.connect();
  } catch (err) {
    broken = true;
    throw err;
  }
  return c;
}

function answer(res: BridgeResponse): void {
  port.postMessage(res);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

port.on("message", (req: BridgeRequest) => {
  void run(req).then(answer);
});

async function run(req: BridgeRequest): Promise<BridgeResponse> {
  if (req.kind === "close") {
    if (client) await client.end().catch(() => {});
    client = null;
    return { id: req.id, ok: true, results: [] };
  }
  try {
    const c = await connection();
    const results: unknown[][][] = [];
    for (const s of req.statements) {
      const r = await c.query({ text: s.sql, values: s.params, rowMode: "array" });
      // A script of several statements (a migration) answers with one result each; keep the last.
      const last = Array.isArray(r) ? (r as pg.QueryResult[])[(r as pg.QueryResult[]).length - 1] : r;
      results.push((last?.rows ?? []) as unknown[][]);
    }
    return { id: req.id, ok: true, results };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    // PostgreSQL's errors carry a five-character SQLSTATE; anything else (ECONNREFUSED while the
    // server is down, ECONNRESET, a client without a code) is the connection failing.
    const sqlState = e.code !== undefined && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
    // A connection that failed (not a statement) is replaced at the next request.
    if (!sqlState || /^08|^57P/.test(sqlState)) broken = true;
    return { id: req.id, ok: false, code: sqlState ?? "CONNECTION", message: e.message ?? String(err) };
  }
}
