/**
 * Fault injection between a service node and PostgreSQL, for the cluster tests (issue 26): a TCP
 * proxy on the node's database link that can delay, stall or freeze it, and SQL that slows a
 * COMMIT or an upsert, or makes commits wait for a synchronous standby that is not there.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import pg from "pg";

/** One direction of a proxied connection: chunks wait here while the link is delayed, stalled or frozen. */
interface Lane {
  from: Socket;
  to: Socket;
  queue: Array<{ at: number; chunk: Buffer | null }>;
  timer: NodeJS.Timeout | null;
}

interface Link {
  up: Lane;
  down: Lane;
  /** The link does not flow before this time (stall), or at all while frozen. */
  heldUntil: number;
  frozen: boolean;
}

/**
 * A TCP proxy in front of PostgreSQL on loopback. Point a node's DATABASE_URL at `url()`; every
 * connection it opens goes through here and can be slowed or stopped:
 * - `delay(ms)`: each chunk waits `ms` in each direction (a slow network);
 * - `stall(ms)`: the connections open now stop flowing for `ms`, then deliver what they held;
 * - `stallOn(text, ms)`: the next client-to-server chunk that contains `text` holds its link for `ms`;
 * - `freeze()` / `thaw()`: the connections open now stop until thawed (a dead network path or a
 *   NAT that lost its state). New connections flow. A client that gives up on a frozen connection
 *   closes its end, but the server does not hear of it until the thaw, as over a real dead path.
 */
export class PgProxy {
  private readonly links = new Set<Link>();
  private delayMs = 0;
  private triggers: Array<{ text: Buffer; ms: number }> = [];
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(targetPort: number, host = "127.0.0.1"): Promise<PgProxy> {
    let proxy: PgProxy | null = null;
    const server = createServer((client) => proxy!.accept(client));
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
    });
    proxy = new PgProxy(server, port, { host, port: targetPort });
    return proxy;
  }

  /** `url` (a postgres:// URL of the real server) with this proxy's port instead. */
  url(url: string): string {
    const u = new URL(url);
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections open through the proxy now. */
  get open(): number {
    return this.links.size;
  }

  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Holds every open connection for `ms`; resolves when they flow again. */
  async stall(ms: number): Promise<void> {
    const until = Date.now() + ms;
    for (const l of this.links) l.heldUntil = Math.max(l.heldUntil, until);
    await new Promise((r) => setTimeout(r, ms));
  }

  /** The next chunk from a client containing `text` holds its connection for `ms` (from that moment). */
  stallOn(text: string, ms: number): void {
    this.triggers.push({ text: Buffer.from(text), ms });
  }

  freeze(): void {
    for (const l of this.links) l.frozen = true;
  }

  thaw(): void {
    for (const l of this.links) {
      l.frozen = false;
      this.pump(l, l.up);
      this.pump(l, l.down);
    }
  }

  async close(): Promise<void> {
    for (const l of this.links) {
      l.up.from.destroy();
      l.up.to.destroy();
    }
    this.links.clear();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(client: Socket): void {
    client.setNoDelay(true);
    const server = connect(this.target.port, this.target.host);
    server.setNoDelay(true);
    const link: Link = {
      up: { from: client, to: server, queue: [], timer: null },
      down: { from: server, to: client, queue: [], timer: null },
      heldUntil: 0,
      frozen: false,
    };
    this.links.add(link);
    const feed = (lane: Lane, isUp: boolean) => {
      lane.from.on("data", (chunk: Buffer) => {
        if (isUp) this.trigger(link, chunk);
        lane.queue.push({ at: Date.now() + this.delayMs, chunk });
        this.pump(link, lane);
      });
      // The other side hears of a close only when the link flows again (after a stall or a thaw).
      lane.from.on("end", () => {
        lane.queue.push({ at: Date.now() + this.delayMs, chunk: null });
        this.pump(link, lane);
      });
      lane.from.on("error", () => {
        lane.queue.push({ at: Date.now() + this.delayMs, chunk: null });
        this.pump(link, lane);
      });
    };
    feed(link.up, true);
    feed(link.down, false);
    const gone = (): void => {
      if (link.up.from.destroyed && link.up.to.destroyed) this.links.delete(link);
    };
    client.on("close", gone);
    server.on("close", gone);
  }

  private trigger(link: Link, chunk: Buffer): void {
    const i = this.triggers.findIndex((t) => chunk.includes(t.text));
    if (i < 0) return;
    const [t] = this.triggers.splice(i, 1);
    link.heldUntil = Math.max(link.heldUntil, Date.now() + t!.ms);
  }

  private pump(link: Link, lane: Lane): void {
    if (lane.timer) return;
    for (;;) {
      if (link.frozen) return; // thaw() pumps again
      const head = lane.queue[0];
      if (!head) return;
      const wait = Math.max(head.at, link.heldUntil) - Date.now();
      if (wait > 0) {
        lane.timer = setTimeout(() => {
          lane.timer = null;
          this.pump(link, lane);
        }, wait);
        return;
      }
      lane.queue.shift();
      if (head.chunk === null) {
        lane.to.end();
        lane.to.destroySoon?.();
        lane.from.destroy();
        return;
      }
      if (!lane.to.destroyed) lane.to.write(head.chunk);
    }
  }
}

/** Runs `text` on `url` with a connection of its own. */
export async function sqlOn<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/**
 * Makes every COMMIT of a transaction that wrote to one of `tables` take `seconds` longer: a
 * deferred constraint trigger sleeps once per transaction, at its commit. (PostgreSQL runs a
 * COMMIT's deferred triggers after the statement timeout was switched off, as it does the wait
 * for a synchronous standby: only the client's own deadline bounds them.) Returns the undo.
 */
export async function slowCommit(url: string, seconds: number, tables: string[] = ["fs_meta"]): Promise<() => Promise<void>> {
  await sqlOn(
    url,
    `CREATE OR REPLACE FUNCTION fs_test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF current_setting('fs_test.slept', true) IS DISTINCT FROM 'yes' THEN
         PERFORM set_config('fs_test.slept', 'yes', true);
         PERFORM pg_sleep(${Number(seconds)});
       END IF;
       RETURN NULL;
     END $$`,
  );
  for (const t of tables) {
    await sqlOn(url, `CREATE CONSTRAINT TRIGGER fs_test_slow_commit AFTER INSERT OR UPDATE ON ${t} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fs_test_slow_commit()`);
  }
  return async () => {
    for (const t of tables) await sqlOn(url, `DROP TRIGGER IF EXISTS fs_test_slow_commit ON ${t}`);
  };
}

/**
 * Makes each statement that inserts or updates rows of `table` take `seconds` longer, once per
 * statement (an upsert fires both the insert and the update triggers; it sleeps once). Returns the undo.
 */
export async function slowUpsert(url: string, table: string, seconds: number): Promise<() => Promise<void>> {
  const fn = `fs_test_slow_${table}`;
  await sqlOn(
    url,
    `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF current_setting('fs_test.${fn}', true) IS DISTINCT FROM statement_timestamp()::text THEN
         PERFORM set_config('fs_test.${fn}', statement_timestamp()::text, true);
         PERFORM pg_sleep(${Number(seconds)});
       END IF;
       RETURN NEW;
     END $$`,
  );
  await sqlOn(url, `CREATE TRIGGER ${fn} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  return async () => {
    await sqlOn(url, `DROP TRIGGER IF EXISTS ${fn} ON ${table}`);
  };
}

/**
 * The synchronous standby goes away: `synchronous_standby_names` names a standby that is not
 * connected, so every durable COMMIT waits (committed locally, not acknowledged) until it is
 * back. `serverUrl` is any database of the server. Returns the undo, which releases the waits.
 */
export async function loseSyncStandby(serverUrl: string): Promise<() => Promise<void>> {
  await sqlOn(serverUrl, "ALTER SYSTEM SET synchronous_standby_names = 'fs_test_standby'");
  await sqlOn(serverUrl, "SELECT pg_reload_conf()");
  return async () => {
    await sqlOn(serverUrl, "ALTER SYSTEM RESET synchronous_standby_names");
    await sqlOn(serverUrl, "SELECT pg_reload_conf()");
  };
}

/** Latency percentile `p` (0..1) of `ms`, nearest rank. */
export function percentile(ms: number[], p: number): number {
  if (ms.length === 0) return 0;
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
}
