import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { threadEntry } from "../../shared/thread-entry.js";
import type { BridgeData, BridgeRequest, BridgeResponse, Statement } from "./sync-protocol.js";

const WORKER_ENTRY = threadEntry("./sync-worker.js", import.meta.url);

/** A statement PostgreSQL refused, or a connection that failed; `code` is the SQLSTATE ("CONNECTION" when none). */
export class PgError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "PgError";
  }

  /** The transaction lost a race with another node's (serialization failure, deadlock): run it again. */
  get retryable(): boolean {
    return this.code === "40001" || this.code === "40P01";
  }

  /** PostgreSQL could not be reached or did not answer in time. */
  get unavailable(): boolean {
    return this.code === "CONNECTION" || this.code === "TIMEOUT" || this.code === "57014" || /^08|^57P/.test(this.code);
  }
}

/**
 * A PostgreSQL connection with a synchronous API, for code that is synchronous by design: the
 * writer's intent handlers read and write inside one transaction the way they do on LMDB, and
 * the front's admission takes a credit lease without giving up its turn (src/http/quota.ts).
 *
 * The connection lives on a thread of its own (sync-worker.ts, the `pg` client); a call posts
 * its statements there and blocks in Atomics.wait until the answer is posted back, like synckit
 * does. It is written here rather than taken from synckit because a caller must be able to give
 * up on a call that outlives its timeout and discard the late answer (by id), and to keep one
 * connection, and its open transaction, across calls.
 *
 * One round trip costs ~60-150 µs on loopback (bench/README.md), so callers batch: KvStore
 * sends a transaction's writes in one call at its commit.
 */
export class SyncPg {
  private nextId = 1;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private closed = false;

  constructor(
    url: string,
    private readonly timeoutMs: number,
    name: string,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const data: BridgeData = { url, timeoutMs, name, port: port2, flag: this.flag.buffer as SharedArrayBuffer };
    this.worker = new Worker(WORKER_ENTRY, { workerData: data, transferList: [port2] });
    this.worker.unref();
    this.port.unref();
  }

  /** Runs one statement and returns its rows, each an array of column values. */
  query(sql: string, params?: unknown[]): unknown[][] {
    return this.run([{ sql, params }])[0]!;
  }

  /** The first column of the first row, or undefined. */
  value(sql: string, params?: unknown[]): unknown {
    return this.query(sql, params)[0]?.[0];
  }

  /** Runs statements in order in one round trip; stops at the first that fails (throws PgError). */
  run(statements: Statement[]): unknown[][][] {
    if (this.closed) throw new PgError("CONNECTION", "connection closed");
    const id = this.nextId++;
    const req: BridgeRequest = { id, kind: "run", statements };
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(req);
    const deadline = Date.now() + this.timeoutMs + 1000;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new PgError("TIMEOUT", `PostgreSQL did not answer within ${this.timeoutMs + 1000} ms`);
      Atomics.wait(this.flag, 0, 0, left);
      Atomics.store(this.flag, 0, 0);
      // Answers to calls given up on earlier arrive first; skip them.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const res = m.message as BridgeResponse;
        if (res.id !== id) continue;
        if (!res.ok) throw new PgError(res.code, res.message);
        return res.results;
      }
    }
  }

  close(): void {
    if (this.closed) return;
    try {
      const id = this.nextId++;
      Atomics.store(this.flag, 0, 0);
      this.port.postMessage({ id, kind: "close" } satisfies BridgeRequest);
      Atomics.wait(this.flag, 0, 0, 2000);
    } finally {
      this.closed = true;
      void this.worker.terminate();
      this.port.close();
    }
  }
}
