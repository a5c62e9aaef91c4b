/**
 * A few PostgreSQL connections (connection.ts) used asynchronously, for a front thread of a
 * cluster node: cache refreshes, credit-lease grants and their heartbeat, and records not cached
 * yet. Nothing here blocks the event loop: a frozen link costs the requests that wait on it (each
 * bounded by its deadline, its connection then replaced), never the answers that need no database.
 */
import { PgLink, requestDeadlineMs, type LinkSettings } from "./connection.js";
import { PgError } from "./errors.js";
import type { Statement } from "./sync-protocol.js";

export class PgPool {
  private readonly idle: PgLink[];
  private readonly waiting: Array<{ resolve: (link: PgLink) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }> = [];
  private closed = false;
  /** When the last request failed for the connection (not for its SQL), or 0: GET /readyz, the log. */
  failingSince = 0;

  constructor(
    private readonly settings: LinkSettings,
    size: number,
    /** Requests waiting for a connection at most (more are refused at once, as the store being away). */
    private readonly maxWaiting = 1000,
  ) {
    this.idle = Array.from({ length: Math.max(1, size) }, () => new PgLink(settings));
  }

  /** Runs `statements` in one round trip on a free connection; the rows of the last that returns rows. */
  async run(statements: readonly Statement[]): Promise<unknown[][]> {
    const link = await this.acquire();
    try {
      const rows = await link.run(statements);
      this.failingSince = 0;
      return rows;
    } catch (err) {
      if (err instanceof PgError && err.unavailable && this.failingSince === 0) this.failingSince = Date.now();
      throw err;
    } finally {
      this.release(link);
    }
  }

  query(sql: string, params?: unknown[]): Promise<unknown[][]> {
    return this.run([{ sql, params }]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new PgError("CONNECTION", "connection pool closed"));
    }
    await Promise.all(this.idle.splice(0).map((l) => l.close()));
  }

  private acquire(): Promise<PgLink> {
    if (this.closed) return Promise.reject(new PgError("CONNECTION", "connection pool closed"));
    const link = this.idle.pop();
    if (link) return Promise.resolve(link);
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new PgError("TIMEOUT", "too many requests wait for PostgreSQL"));
    return new Promise((resolve, reject) => {
      // Time in the queue counts against the deadline: every connection may be stuck on a dead link.
      const w = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(new PgError("TIMEOUT", `no PostgreSQL connection free within ${requestDeadlineMs(this.settings.timeoutMs)} ms`));
        }, requestDeadlineMs(this.settings.timeoutMs)),
      };
      this.waiting.push(w);
    });
  }

  private release(link: PgLink): void {
    if (this.closed) {
      void link.close();
      return;
    }
    const w = this.waiting.shift();
    if (!w) {
      this.idle.push(link);
      return;
    }
    clearTimeout(w.timer);
    w.resolve(link);
  }
}
