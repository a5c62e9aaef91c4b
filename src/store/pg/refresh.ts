import { toBufferKey } from "ordered-binary";
import type { SyncPg } from "./sync-client.js";

/** A front cache of records another node may change (keys, projects, orgs' plans). */
export interface RefreshTarget<V> {
  /** fs_<table> holding the records, keyed by id. */
  table: string;
  ids(): string[];
  /** The record as stored now (undefined once deleted). */
  update(id: string, record: V | undefined): void;
}

/** Ids read per statement. */
const CHUNK = 500;

/**
 * Re-reads every cached record of the targets every `everyMs`, in one statement per table and
 * chunk, so a change made on another node (a key disabled, a plan changed) is seen here within
 * that bound (docs/cluster.md). When PostgreSQL cannot be read, the caches keep what they have:
 * a node goes on serving keys it knows while the database is away.
 */
export class ClusterRefresher {
  private timer: NodeJS.Timeout | null = null;
  /** Consecutive rounds that failed (GET /metrics could show it; the log does). */
  failures = 0;

  constructor(
    private readonly sql: SyncPg,
    private readonly targets: Array<RefreshTarget<any>>,
    private readonly everyMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.round(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  round(): void {
    try {
      for (const t of this.targets) {
        const ids = t.ids();
        for (let i = 0; i < ids.length; i += CHUNK) {
          const part = ids.slice(i, i + CHUNK);
          const rows = this.sql.query(`SELECT v::text FROM fs_${t.table} WHERE k = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)`, [
            part.map((id) => toBufferKey(id).toString("hex")),
          ]);
          const found = new Map<string, unknown>();
          for (const r of rows) {
            const v = JSON.parse(r[0] as string) as { id: string };
            found.set(v.id, v);
          }
          for (const id of part) t.update(id, found.get(id));
        }
      }
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.onError(err as Error);
    }
  }
}
