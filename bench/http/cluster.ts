/**
 * The scale-out benchmark (`node dist/bench/run.js --only cluster`): N nodes of the service on one
 * PostgreSQL (durable commits), against one node of the same cluster, in the same run and rounds,
 * each against the uWS hello world under the same generator.
 *
 * What it answers: whether the cluster scales out or serialises on the database. Resolve is the
 * write-heavy call: every answer waits for its node's writer to commit a SERIALIZABLE transaction
 * to PostgreSQL. Each round measures, with `connections` per node:
 *   - hello world;
 *   - resolve on one node (its own org);
 *   - resolve on every node at once, each node serving its own org (tenants spread over nodes);
 *   - resolve on every node at once, all for one org and the same users and sessions (the
 *     worst case: the nodes' transactions touch the same records and PostgreSQL orders them).
 * The N-node figures are sums over the nodes of one run; the CPU is the nodes' processes and
 * PostgreSQL's, per answer. Every answer must be 200; anything else is a problem in the report.
 */
import { startPostgres, type TestPostgres } from "../lib/postgres.js";
import { ensureIpDataset, machineLine } from "../lib/context.js";
import { cores, readCpu, type CpuReading } from "./cpu.js";
import { wrkGenerator, autocannonGenerator, type Load, type LoadGenerator, type Measurement } from "./generators.js";
import { median } from "./report.js";
import { resolve } from "./scenarios/sessions.js";
import type { Prepared } from "./scenarios/types.js";
import { startHello, startService, type ServerProcess, type ServiceProcess } from "./servers.js";

export interface ClusterBenchOptions {
  nodes: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  /** Connections per node. */
  connections: number;
  poolThreads: number;
}

/** One measured configuration: which nodes get load, and with what. */
interface Setup {
  name: string;
  targets: Array<{ server: ServerProcess; prepared: Prepared }>;
  /** Processes whose CPU is the service's. */
  pids: number[];
  postgres: boolean;
}

interface Round {
  rps: number;
  p99Ms: number;
  bad: number;
  serviceUs: number | null;
  dbUs: number | null;
  /** The generators' CPU per answer (wrk: reaped children of this process; autocannon: this process). */
  generatorUs: number | null;
}

export async function runClusterBench(opts: ClusterBenchOptions): Promise<{ markdown: string; clean: boolean }> {
  const problems: string[] = [];
  const generator: LoadGenerator = wrkGenerator() ?? autocannonGenerator();
  const dataDir = await ensureIpDataset();
  const hello = await startHello();
  let pg: TestPostgres | null = null;
  const nodes: ServiceProcess[] = [];
  const setups: Setup[] = [];
  const results = new Map<string, Round[]>();
  try {
    pg = await startPostgres({ durable: true });
    const url = await pg.createDatabase("fs_bench_cluster");
    for (let i = 0; i < opts.nodes; i++) {
      nodes.push(
        await startService({ datasetsFrom: dataDir, poolThreads: opts.poolThreads, databaseUrl: url, env: { FS_NODE_ID: `bench-${i}` }, name: `node ${i}` }),
      );
      log(`node ${i} listening at ${nodes[i]!.url}`);
    }
    // Each node's org is made through that node; the shared org through node 0, its key used on every node.
    const own = await Promise.all(nodes.map((n) => resolve.setup(n)));
    const shared = await resolve.setup(nodes[0]!);
    const all = nodes.map((n) => n.pid);
    setups.push({ name: "hello", targets: [{ server: hello, prepared: { paths: ["/"], headers: {} } }], pids: [hello.pid], postgres: false });
    setups.push({ name: "resolve, 1 node", targets: [{ server: nodes[0]!, prepared: own[0]! }], pids: [nodes[0]!.pid], postgres: true });
    setups.push({
      name: `resolve, ${opts.nodes} nodes, an org each`,
      targets: nodes.map((n, i) => ({ server: n, prepared: own[i]! })),
      pids: all,
      postgres: true,
    });
    setups.push({ name: `resolve, ${opts.nodes} nodes, one org`, targets: nodes.map((n) => ({ server: n, prepared: shared })), pids: all, postgres: true });
    for (const s of setups) {
      for (const t of s.targets) await verify(t.server, t.prepared, s.name === "hello" ? null : resolve.check);
      results.set(s.name, []);
    }
    log(`verified: every node answers resolve 200 for its own org and for the shared one`);

    if (opts.warmupS > 0) for (const s of setups) await measure(s, generator, opts, opts.warmupS, pg);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const s of round % 2 ? setups : [setups[0]!, ...setups.slice(1).reverse()]) {
        const r = await measure(s, generator, opts, opts.durationS, pg);
        results.get(s.name)!.push(r);
        log(
          `round ${round}/${opts.rounds} ${s.name.padEnd(28)} ${String(Math.round(r.rps)).padStart(7)} req/s  p99 ${r.p99Ms.toFixed(1)} ms${r.bad ? `  (${r.bad} not 200)` : ""}`,
        );
      }
    }
    for (const [name, rounds] of results) {
      const bad = rounds.reduce((n, r) => n + r.bad, 0);
      if (bad) problems.push(`${name}: ${bad} responses were not 200 or failed`);
    }
  } finally {
    for (const n of nodes) {
      const how = await n.stop();
      if (how !== "exit 0") problems.push(`${n.name} did not stop cleanly on SIGTERM (${how})`);
      const logged = n
        .output()
        .split("\n")
        .filter((l) => /"level":"error"/.test(l));
      if (logged.length) problems.push(`${n.name} logged ${logged.length} error(s), the first: \`${logged[0]!.slice(0, 300)}\``);
      n.cleanup();
    }
    await hello.stop();
    await pg?.destroy();
  }

  const helloRps = median(results.get("hello")!.map((r) => r.rps));
  const oneRps = median(results.get("resolve, 1 node")!.map((r) => r.rps));
  const fmt = (n: number | null, digits = 0): string =>
    n === null ? "–" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const rows = [...results].map(([name, rounds]) => {
    const rps = median(rounds.map((r) => r.rps));
    const svc = rounds.every((r) => r.serviceUs !== null) ? median(rounds.map((r) => r.serviceUs!)) : null;
    const db = rounds.every((r) => r.dbUs !== null) ? median(rounds.map((r) => r.dbUs!)) : null;
    const gen = rounds.every((r) => r.generatorUs !== null) ? median(rounds.map((r) => r.generatorUs!)) : null;
    const busy = svc === null || gen === null ? null : ((svc + (db ?? 0) + gen) * rps) / 1e6;
    const isHello = name === "hello";
    return `| ${name} | ${fmt(rps)} | ${fmt(Math.min(...rounds.map((r) => r.rps)))}–${fmt(Math.max(...rounds.map((r) => r.rps)))} | ${(rps / helloRps).toFixed(3)} | ${isHello ? "–" : (rps / oneRps).toFixed(2)} | ${fmt(median(rounds.map((r) => r.p99Ms)), 1)} | ${fmt(svc, 1)} | ${isHello ? "–" : fmt(db, 1)} | ${fmt(gen, 1)} | ${fmt(busy, 2)} of ${cores()} |`;
  });
  const markdown = [
    `## Cluster: ${opts.nodes} nodes on one PostgreSQL vs one node (${new Date().toISOString()})`,
    "",
    `- ${machineLine()}`,
    `- ${opts.nodes} service nodes (FS_STORE=postgres, FS_POOL_THREADS=${opts.poolThreads} each) on one PostgreSQL (durable commits), all on this machine's ${cores()} cores with the generators`,
    `- load: ${generator.version}, ${opts.connections} connections per loaded node (one generator per node, run together), ${opts.durationS} s per run, ${opts.rounds} interleaved round(s), medians shown; warm-up ${opts.warmupS} s per row`,
    "",
    "| Load | req/s (sum over nodes) | range | ratio to hello world | vs 1 node | p99 ms (median over nodes) | server µs per answer (all nodes) | PostgreSQL µs per answer | generators µs per answer | cores busy |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...rows,
    "",
    "Cores busy: (server + PostgreSQL + generators) CPU per answer times req/s. Near all the cores, the machine is the limit, not the database; well below them, the nodes wait on PostgreSQL's round trips and commits.",
    "",
    ...(problems.length ? ["**Problems**", "", ...problems.map((p) => `- ${p}`)] : ["- no problems: every response was 200, every node stopped cleanly"]),
    "",
  ].join("\n");
  return { markdown, clean: problems.length === 0 };
}

/** One run of a setup: its generators together, the CPU of its processes and of PostgreSQL around them. */
async function measure(s: Setup, g: LoadGenerator, opts: ClusterBenchOptions, durationS: number, pg: TestPostgres | null): Promise<Round> {
  const dbPid = s.postgres ? pg?.pid() : undefined;
  const before = s.pids.map((pid, i) => readCpu(pid, i === 0 ? dbPid : undefined));
  const runs: Measurement[] = await Promise.all(
    s.targets.map((t) => {
      const load: Load = {
        url: t.server.url,
        paths: t.prepared.paths,
        headers: t.prepared.headers,
        method: t.prepared.method,
        bodies: t.prepared.bodies,
        connections: opts.connections,
        durationS,
      };
      return g.run(load);
    }),
  );
  const after = s.pids.map((pid, i) => readCpu(pid, i === 0 ? dbPid : undefined));
  const requests = runs.reduce((n, m) => n + m.requests, 0);
  const spent = (pick: (r: CpuReading) => number | undefined): number | null => {
    let sum = 0;
    for (let i = 0; i < s.pids.length; i++) {
      const a = after[i] ? pick(after[i]!) : undefined;
      const b = before[i] ? pick(before[i]!) : undefined;
      if (a === undefined || b === undefined) return null;
      sum += a - b;
    }
    return requests > 0 ? sum / requests : null;
  };
  return {
    rps: runs.reduce((n, m) => n + m.rps, 0),
    p99Ms: median(runs.map((m) => m.p99Ms)),
    bad: runs.reduce((n, m) => n + m.errorStatuses + m.socketErrors, 0),
    serviceUs: spent((r) => r.server),
    dbUs: dbPid === undefined ? null : spent((r) => r.db ?? 0),
    generatorUs:
      before[0] && after[0] && requests > 0
        ? (g.runsIn === "child" ? after[0].children - before[0].children : after[0].self - before[0].self) / requests
        : null,
  };
}

/** Every path once: 200, and a body the scenario's check accepts. */
async function verify(server: ServerProcess, prepared: Prepared, check: ((path: string, body: unknown) => string | null) | null): Promise<void> {
  for (const [i, path] of prepared.paths.entries()) {
    const res = await fetch(server.url + path, { method: prepared.method ?? "GET", headers: prepared.headers, body: prepared.bodies?.[i] });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${server.name} ${path}: status ${res.status}: ${text.slice(0, 300)}`);
    const problem = check?.(path, JSON.parse(text));
    if (problem) throw new Error(`${server.name} ${path}: ${problem}`);
  }
}

function log(line: string): void {
  console.log(`  [cluster] ${line}`);
}
