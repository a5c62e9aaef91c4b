/**
 * One PostgreSQL connection, asynchronous, that is never trusted after a request of unknown
 * outcome: the base of the synchronous connection (sync-worker.ts) and of the front's pool
 * (pool.ts).
 *
 * - One request at a time: a request is sent only once the previous one answered.
 * - A request is one message: its statements are sent as one simple query (sql-text.ts), so a
 *   transaction written as BEGIN ... COMMIT commits whole or not at all.
 * - A deadline per request. When it passes, the socket is destroyed (nothing more is sent or read
 *   on it) and the backend is terminated over a fresh connection, so a transaction it held open
 *   ends and releases its locks even when the link to it is dead. The request fails with
 *   PgError(TIMEOUT, unknown): what it did is not known.
 * - Any failure that is not PostgreSQL refusing a statement (reset, end, a lost link) ends the
 *   connection the same way; the next request opens a new one.
 * - TCP keepalive on, so an idle connection whose peer vanished is noticed and replaced.
 */
import pg from "pg";
import { asPgError, PgError } from "./errors.js";
import { scriptOf } from "./sql-text.js";
import type { Statement } from "./sync-protocol.js";

export interface LinkSettings {
  url: string;
  /** statement_timeout and connect timeout (FS_PG_TIMEOUT_MS). */
  timeoutMs: number;
  /** application_name, so `pg_stat_activity` tells the nodes' connections apart. */
  name: string;
}

/**
 * How long a request may take in all: the statement timeout, plus a grace for the answer to
 * travel, so that a statement PostgreSQL times out fails cleanly (57014) before the deadline
 * makes its outcome unknown.
 */
export function requestDeadlineMs(timeoutMs: number): number {
  return timeoutMs + Math.min(1000, Math.max(200, timeoutMs / 2));
}

export class PgLink {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private busy = false;

  constructor(private readonly settings: LinkSettings) {}

  /**
   * Runs `statements` in one round trip; resolves with the rows (arrays of column values) of the
   * last one that returns rows. Throws PgError: PostgreSQL's SQLSTATE when it refused a statement (the connection
   * stays; a transaction opened by the request is left aborted, for the caller to roll back), or
   * CONNECTION / TIMEOUT, with `unknown` set when the request may have run.
   */
  async run(statements: readonly Statement[], deadlineMs = requestDeadlineMs(this.settings.timeoutMs)): Promise<unknown[][]> {
    if (this.busy) throw new Error("PgLink: one request at a time");
    this.busy = true;
    const started = Date.now();
    try {
      const c = await this.connect(deadlineMs);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PgError("TIMEOUT", `PostgreSQL did not answer within ${deadlineMs} ms`, true)), Math.max(1, deadlineMs - (Date.now() - started)));
      });
      try {
        const r = await Promise.race([c.query({ text: scriptOf(statements), rowMode: "array" }), deadline]);
        return rowsOf(r as pg.QueryResult | pg.QueryResult[]);
      } catch (err) {
        const e = asPgError(err, true);
        if (e.code === "CONNECTION" || e.code === "TIMEOUT" || /^08|^57P/.test(e.code)) this.drop(c);
        throw e;
      } finally {
        clearTimeout(timer);
      }
    } finally {
      this.busy = false;
    }
  }

  /** Gives up on the request in flight, if any: its connection is ended at once, as at its deadline. */
  abandon(): void {
    if (this.client) this.drop(this.client);
  }

  /** Ends the connection (a clean stop). */
  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    if (c) await Promise.race([c.end().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
    if (c) destroySocket(c);
  }

  /** The process id of the backend serving this connection now, if any (tests). */
  get backendPid(): number | null {
    return (this.client as unknown as { processID: number | null } | null)?.processID ?? null;
  }

  private async connect(deadlineMs: number): Promise<pg.Client> {
    if (this.client) return this.client;
    if (!this.connecting) {
      const c = new pg.Client({
        connectionString: this.settings.url,
        connectionTimeoutMillis: Math.min(deadlineMs, this.settings.timeoutMs),
        statement_timeout: this.settings.timeoutMs,
        application_name: this.settings.name,
        keepAlive: true,
        keepAliveInitialDelayMillis: Math.max(1000, this.settings.timeoutMs),
      });
      // A connection-level failure: the next request opens a new connection.
      c.on("error", () => this.drop(c));
      c.on("end", () => this.drop(c));
      this.connecting = c.connect().then(
        () => {
          this.connecting = null;
          this.client = c;
          return c;
        },
        (err: unknown) => {
          this.connecting = null;
          destroySocket(c);
          throw asPgError(err, false);
        },
      );
    }
    return this.connecting;
  }

  /** Never used again: the socket is destroyed and the backend, if PostgreSQL still runs it, terminated. */
  private drop(c: pg.Client): void {
    if (this.client === c) this.client = null;
    if (dropped.has(c)) return;
    dropped.add(c);
    const pid = (c as unknown as { processID: number | null }).processID;
    destroySocket(c);
    if (pid) void terminateBackend(this.settings, pid);
  }
}

/**
 * The rows of the last statement that returns rows (a SELECT, or a RETURNING clause): a script
 * answers with one result per statement, and BEGIN, SET or COMMIT around a query return none.
 */
function rowsOf(r: pg.QueryResult | pg.QueryResult[]): unknown[][] {
  if (!Array.isArray(r)) return r.rows as unknown[][];
  for (let i = r.length - 1; i >= 0; i--) if (r[i]!.fields.length > 0) return r[i]!.rows as unknown[][];
  return [];
}

/** Connections already given up (each backend is terminated once). */
const dropped = new WeakSet<pg.Client>();

function destroySocket(c: pg.Client): void {
  const conn = (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
  conn?.stream?.destroy();
}

/**
 * Ends backend `pid` over a connection of its own (the link to it may be dead): its open
 * transaction rolls back and its locks go. Best effort, bounded by the timeout.
 */
async function terminateBackend(settings: LinkSettings, pid: number): Promise<void> {
  const c = new pg.Client({ connectionString: settings.url, connectionTimeoutMillis: settings.timeoutMs, statement_timeout: settings.timeoutMs, application_name: `${settings.name}:reaper` });
  c.on("error", () => {});
  const timer = setTimeout(() => destroySocket(c), settings.timeoutMs * 2);
  try {
    await c.connect();
    await c.query("SELECT pg_terminate_backend($1)", [pid]);
  } catch {
    // PostgreSQL is away: it ends the backend itself when it notices the connection is gone.
  } finally {
    clearTimeout(timer);
    await c.end().catch(() => {});
    destroySocket(c);
  }
}
