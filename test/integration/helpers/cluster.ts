/** Pieces the cluster tests share: node settings, SQL on the shared database, and a load that counts what was answered. */
import { api, type TestServer } from "./server.js";
import { sqlOn } from "./faults.js";

/** The environment of a node named `id` on the database `url`; `extra` wins. */
export function clusterNodeEnv(url: string, id: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    FS_STORE: "postgres",
    DATABASE_URL: url,
    FS_NODE_ID: id,
    FS_CLUSTER_CACHE_MS: "300",
    FS_LEASE_CREDITS: "200",
    FS_ENABLE_METER: "true",
    FS_TRUSTED_PROXIES: "127.0.0.1,::1",
    ...extra,
  };
}

/** Credits the shared ledger holds for the org this period, as `GET /v1/orgs/{id}/usage` on `node` answers. */
export async function usedOf(node: TestServer, orgId: string, key: string): Promise<number> {
  const res = await api(node, "GET", `/v1/orgs/${orgId}/usage`, { key });
  if (res.status !== 200) throw new Error(`usage: ${res.status} ${JSON.stringify(res.body.error)}`);
  return res.body.data.used as number;
}

/** The leases of an org in the shared database, per node. */
export async function leasesOf(url: string, orgId: string): Promise<Array<{ node_id: string; granted: number; used: number }>> {
  const rows = await sqlOn<{ node_id: string; granted: string; used: string }>(url, "SELECT node_id, granted, used FROM fs_leases WHERE org_id = $1 ORDER BY node_id", [orgId]);
  return rows.map((r) => ({ node_id: r.node_id, granted: Number(r.granted), used: Number(r.used) }));
}

/** What a load saw: answers by status, credits charged by the 200s, and each answer's time. */
export interface LoadTally {
  attempted: number;
  statuses: Map<number, number>;
  /** Sum of `metadata.credits` of the successful answers (what the org was told it was charged). */
  credits: number;
  /** Each answer: when it was sent (performance.now()), how long it took (ms), its status. */
  samples: Array<{ at: number; ms: number; status: number }>;
  ok(): number;
}

function tally(): LoadTally {
  return {
    attempted: 0,
    statuses: new Map(),
    credits: 0,
    samples: [],
    ok() {
      return this.statuses.get(200) ?? 0;
    },
  };
}

/**
 * Calls `GET /v1/ip/{ip}` with `key` from `concurrency` callers at once, each on the nodes in
 * turn, until `stop()` is called (or, with `untilRefused`, until `untilRefused` answers in a row
 * were all 429). Network errors (a node killed mid-call) count as status -1.
 */
export class IpLoad {
  readonly tally = tally();
  private stopped = false;
  private refusedStreak = 0;
  readonly done: Promise<void>;

  constructor(
    private readonly nodes: () => TestServer[],
    private readonly key: string,
    concurrency: number,
    private readonly opts: { untilRefused?: number; paceMs?: number } = {},
  ) {
    this.done = Promise.all(Array.from({ length: concurrency }, (_, i) => this.caller(i))).then(() => undefined);
  }

  /** Stops the callers and resolves once every call in flight was answered. */
  async stop(): Promise<LoadTally> {
    this.stopped = true;
    await this.done;
    return this.tally;
  }

  private async caller(i: number): Promise<void> {
    let turn = i;
    while (!this.stopped) {
      const nodes = this.nodes();
      const node = nodes[turn++ % nodes.length]!;
      const started = performance.now();
      let status = -1;
      try {
        const res = await fetch(`${node.url}/v1/ip/8.8.8.8`, { headers: { authorization: `Bearer ${this.key}` } });
        const body = (await res.json()) as { metadata?: { credits?: number } };
        status = res.status;
        if (status === 200) this.tally.credits += Number(body.metadata?.credits ?? 0);
      } catch {
        status = -1;
      }
      this.tally.samples.push({ at: started, ms: performance.now() - started, status });
      this.tally.attempted++;
      this.tally.statuses.set(status, (this.tally.statuses.get(status) ?? 0) + 1);
      this.refusedStreak = status === 429 ? this.refusedStreak + 1 : 0;
      if (this.opts.untilRefused !== undefined && this.refusedStreak >= this.opts.untilRefused) this.stopped = true;
      if (this.opts.paceMs) await new Promise((r) => setTimeout(r, this.opts.paceMs));
    }
  }
}
