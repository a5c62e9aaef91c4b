import pg from "pg";
import type { Logger } from "../../shared/log.js";

/**
 * One node of the cluster at a time does a job (the Stripe overage reporter): the one holding a
 * PostgreSQL session advisory lock, on a connection of its own. A node that dies loses its
 * connection and with it the lock, and the next node to try takes over (within `everyMs`).
 */
export class Leadership {
  private client: pg.Client | null = null;
  private leader = false;
  private timer: NodeJS.Timeout | null = null;
  private trying = false;

  constructor(
    private readonly url: string,
    private readonly lockKey: number,
    private readonly everyMs: number,
    private readonly log: Logger,
    private readonly name: string,
  ) {}

  start(): void {
    void this.attempt();
    this.timer = setInterval(() => void this.attempt(), this.everyMs);
    this.timer.unref();
  }

  isLeader(): boolean {
    return this.leader;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    this.leader = false;
    if (c) await c.end().catch(() => {});
  }

  private async attempt(): Promise<void> {
    if (this.trying || this.leader) return;
    this.trying = true;
    try {
      if (!this.client) {
        const c = new pg.Client({ connectionString: this.url, application_name: this.name, connectionTimeoutMillis: 5000 });
        c.on("error", () => this.lost(c));
        c.on("end", () => this.lost(c));
        await c.connect();
        this.client = c;
      }
      const r = await this.client.query("SELECT pg_try_advisory_lock($1) AS got", [this.lockKey]);
      if (r.rows[0]?.got === true) {
        this.leader = true;
        this.log.info("this node leads", { job: this.name });
      }
    } catch (err) {
      this.log.warn("leadership attempt failed", { job: this.name, reason: (err as Error).message });
      if (this.client) this.lost(this.client);
    } finally {
      this.trying = false;
    }
  }

  private lost(c: pg.Client): void {
    if (this.client !== c) return;
    this.client = null;
    if (this.leader) this.log.warn("leadership lost (connection to PostgreSQL closed)", { job: this.name });
    this.leader = false;
    void c.end().catch(() => {});
  }
}
