/**
 * The thread behind SyncPg (sync-client.ts): one PostgreSQL connection (connection.ts) answering
 * one request at a time, in the order they came. Each answer is posted on the port, then the
 * shared flag is raised so the caller, blocked in Atomics.wait, wakes and reads it. An `abort`
 * (the caller gave up) is handled at once: the connection of the request in flight is ended.
 */
import { workerData, type MessagePort } from "node:worker_threads";
import { PgLink } from "./connection.js";
import { asPgError } from "./errors.js";
import type { BridgeData, BridgeRequest, BridgeResponse } from "./sync-protocol.js";

const data = workerData as BridgeData;
const port: MessagePort = data.port;
const flag = new Int32Array(data.flag);
const link = new PgLink(data);

function answer(res: BridgeResponse): void {
  port.postMessage(res);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

/** Requests waiting for the connection, oldest first, and the one in flight. */
const queue: Array<Extract<BridgeRequest, { kind: "run" | "close" }>> = [];
let active: number | null = null;
const aborted = new Set<number>();

port.on("message", (req: BridgeRequest) => {
  if (req.kind === "abort") {
    // The request's outcome is unknown to the caller: its connection is never used again.
    if (active === req.target) link.abandon();
    else aborted.add(req.target);
    return;
  }
  queue.push(req);
  if (active === null) void next();
});

async function next(): Promise<void> {
  const req = queue.shift();
  if (!req) return;
  active = req.id;
  try {
    if (aborted.delete(req.id)) return;
    if (req.kind === "close") {
      await link.close();
      answer({ id: req.id, ok: true, rows: [] });
      return;
    }
    try {
      answer({ id: req.id, ok: true, rows: await link.run(req.statements) });
    } catch (err) {
      const e = asPgError(err, true);
      answer({ id: req.id, ok: false, code: e.code, message: e.message, unknown: e.unknown });
    }
  } finally {
    active = null;
    if (queue.length > 0) void next();
  }
}
