import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { threadEntry } from "../../shared/thread-entry.js";
import { requestDeadlineMs } from "./connection.js";
import { PgError } from "./errors.js";
import type { BridgeData, BridgeRequest, BridgeResponse, Statement } from "./sync-protocol.js";

export { PgError } from "./errors.js";

const WORKER_ENTRY = threadEntry("./sync-worker.js", import.meta.url);

/** How long past the connection's own deadline the caller waits before it gives up itself. */
const CALLER_GRACE_MS = 1000;

/**
 * A PostgreSQL connection with a synchronous API, for code that is synchronous by design: the
 * writer's intent handlers read and write inside one transaction the way they do on LMDB.
 *
 * The connection lives on a thread of its own (sync-worker.ts over connection.ts); a call posts
 * its statements there and blocks in Atomics.wait until the answer is posted back, like synckit
 * does. It is written here rather than taken from synckit because a caller must be able to give
 * up on a call, and to keep one connection, and its open transaction, across calls.
 *
 * A call is one request and one round trip, whatever the number of its statements (they travel
 * as one simple query). Its deadline ends the connection (connection.ts): a call that failed
 * with `unknown` set may have run, and the next call runs on a new connection, so nothing of an
 * abandoned transaction can run after it.
 */
export class SyncPg {
  private nextId = 1;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private closed = false;

  /**
   * @param isDown when it says PostgreSQL is away (another connection of this thread found so),
   *   calls fail at once with PgError(CONNECTION) instead of waiting for their deadline.
   */
  constructor(
    url: string,
    private readonly timeoutMs: number,
    name: string,
    private readonly isDown: () => boolean = () => false,
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
    return this.run([{ sql, params }]);
  }

  /** The first column of the first row, or undefined. */
  value(sql: string, params?: unknown[]): unknown {
    return this.query(sql, params)[0]?.[0];
  }

  /**
   * Runs statements in order in one round trip and returns the rows of the last that returns
   * rows (a SELECT between BEGIN and COMMIT); stops at the
   * first that fails (throws PgError). Statements after a BEGIN in the same call are one
   * transaction only if the call also carries its COMMIT.
   */
  run(statements: Statement[]): unknown[][] {
    if (this.closed) throw new PgError("CONNECTION", "connection closed");
    if (this.isDown()) throw new PgError("CONNECTION", "PostgreSQL is unreachable from this node right now");
    const id = this.nextId++;
    const req: BridgeRequest = { id, kind: "run", statements };
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(req);
    const waitMs = requestDeadlineMs(this.timeoutMs) + CALLER_GRACE_MS;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        // The connection thread did not answer in time (it is stuck): it ends that connection.
        this.port.postMessage({ id: this.nextId++, kind: "abort", target: id } satisfies BridgeRequest);
        throw new PgError("TIMEOUT", `PostgreSQL did not answer within ${waitMs} ms`, true);
      }
      Atomics.wait(this.flag, 0, 0, left);
      Atomics.store(this.flag, 0, 0);
      // Answers to calls given up on earlier arrive first; skip them.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const res = m.message as BridgeResponse;
        if (res.id !== id) continue;
        if (!res.ok) throw new PgError(res.code, res.message, res.unknown);
        return res.rows;
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
