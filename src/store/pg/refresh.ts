import { toBufferKey } from "ordered-binary";
import type { PgPool } from "./pool.js";

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
 * a node goes on serving keys it knows while the database is away. The reads are asynchronous
 * (a pool of the front's own): a slow or frozen link delays the refresh, never the answers.
 */
export class ClusterRefresher {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** Bumped by each change this node made to a cached record (a key disabled here, a plan). */
  private generation = 0;
  /** Consecutive rounds that failed (GET /metrics could show it; the log does). */
  failures = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly targets: Array<RefreshTarget<any>>,
    private readonly everyMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.everyMs);
    this.timer.unref();
  }

  /**
   * A cached record was just changed here, from the writer's committed answer: a read sent
   * before that may hold the old record, so reads in flight now are not applied (the next round
   * reads again).
   */
  localChange(): void {
    this.generation++;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over the caches; skipped while the previous one still runs. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const t of this.targets) {
        const ids = t.ids();
        for (let i = 0; i < ids.length; i += CHUNK) {
          const part = ids.slice(i, i + CHUNK);
          const generation = this.generation;
          const rows = await this.pool.query(`SELECT v::text FROM fs_${t.table} WHERE k = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)`, [
            part.map((id) => toBufferKey(id).toString("hex")),
          ]);
          const found = new Map<string, unknown>();
          for (const r of rows) {
            const v = JSON.parse(r[0] as string) as { id: string };
            found.set(v.id, v);
          }
          if (generation !== this.generation) continue;
          for (const id of part) t.update(id, found.get(id));
        }
      }
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.onError(err as Error);
    } finally {
      this.running = false;
    }
  }
}
