/**
 * The HTTP benchmark: the uWS hello-world baseline and the real service, driven by the same load
 * generators, every scenario in bench/http/scenarios/. Run through bench/run.ts.
 *
 * Order: start both servers (the service on a temporary DATA_DIR that links to a built dataset),
 * set up and verify every scenario (every path answered once, status and body checked; a scenario
 * that fails is reported and not measured), warm up each scenario, then measure in interleaved
 * rounds (hello, ip-lookup, ... then again) under each generator, and report medians: the machine
 * is shared and noisy, and a single run says little. Targets are reported, never enforced.
 */
import { execFileSync } from "node:child_process";
import { basename } from "node:path";
import { REPO_ROOT } from "../../src/config/index.js";
import { currentIpDatasetDir } from "../../src/datasets/ip-dataset.js";
import { ensureIpDataset, machineLine } from "../lib/context.js";
import { autocannonGenerator, wrkGenerator, type Load, type LoadGenerator, type Measurement } from "./generators.js";
import { ablatedBuild, type CutName } from "./ablate.js";
import { cores, cpuSpent, readCpu } from "./cpu.js";
import { cpuTable, markdownTable, toRows, variantTable, type Row, type Series } from "./report.js";
import { scenarios } from "./scenarios/index.js";
import type { Prepared, Scenario } from "./scenarios/types.js";
import { startHello, startService, type ServerProcess, type ServiceProcess } from "./servers.js";
import { startPostgres } from "../lib/postgres.js";
import { buildRef, variantOrder, variantScenarioName, type RefBuild, type VariantSpec } from "./variants.js";

/** How the runner measures. */
export interface HttpBenchOptions {
  /** Seconds per measured run. */
  durationS: number;
  /** Seconds of warm-up per scenario (autocannon), not counted. */
  warmupS: number;
  /** Interleaved rounds per scenario and generator; medians are over these. */
  rounds: number;
  connections: number;
  /** FS_POOL_THREADS for the service. */
  poolThreads: number;
  /** Scenario names to run (the hello baseline always runs); all when absent. */
  only?: string[];
  /** Serve an ablated build with these parts cut out instead of the real one (ablate.ts). */
  ablate?: CutName[];
  /**
   * The service's store: `lmdb` (default, embedded) or `postgres`: a real PostgreSQL started for
   * the run (durable commits), the service one node of a cluster on it (docs/cluster.md).
   */
  store?: "lmdb" | "postgres";
  /**
   * Variants of the service to measure side by side in the same rounds (variants.ts): rows named
   * `<scenario>@<variant>`. Absent or empty: the current build alone, rows unsuffixed.
   */
  variants?: VariantSpec[];
}

/** The outcome: the markdown report, and whether everything ran cleanly (targets aside). */
export interface HttpBenchResult {
  markdown: string;
  /** False when a server died, a scenario failed verification, or responses were wrong. */
  clean: boolean;
  /** Every scenario's rounds under every generator (bench:guard reads their CPU per response). */
  series: Series[];
}

/** One service process the run measures: the current build, or a variant of it (variants.ts). */
interface Served {
  /** Row suffix; undefined in a run without variants. */
  variant: string | undefined;
  /** What it is, for the report: the commit, a worktree build, its extra environment. */
  describe: string;
  /** Its dist/ root (an ablated copy when --ablate). */
  root: string;
  env: Record<string, string>;
  /** Whether it runs on the run's PostgreSQL. */
  postgres: boolean;
  /** Parts of its build are cut out (ablate.ts): the checks after the runs do not apply. */
  ablated: boolean;
  service?: ServiceProcess;
}

interface Armed {
  /** Row name: the scenario, suffixed `@<variant>` when the run has variants. */
  name: string;
  scenario: Scenario;
  server: ServerProcess;
  /** The variant's database is the run's PostgreSQL. */
  postgres: boolean;
  prepared: Prepared;
  /** Responses with the expected status seen so far (verification, warm-up, runs). */
  expectedSeen: number;
  loadRuns: number;
}

const BASELINE = "hello";
const PAUSE_MS = 300;

/** Runs every scenario as described in the module comment. */
export async function runHttpBench(opts: HttpBenchOptions): Promise<HttpBenchResult> {
  const problems: string[] = [];
  const notes: string[] = [];
  const dataDir = await ensureIpDataset();
  const generators = [autocannonGenerator(), wrkGenerator()].filter((g): g is LoadGenerator => g !== null);
  if (generators.length === 1) notes.push("wrk not on PATH: autocannon only (apt-get install -y wrk)");

  const variants = opts.variants ?? [];
  const refBuilds = new Map<string, RefBuild>();
  const ablatedCopies = new Map<string, { root: string; cleanup(): void }>();
  const cleanupBuilds = (): void => {
    for (const a of ablatedCopies.values()) a.cleanup();
    for (const b of refBuilds.values()) b.cleanup();
  };
  const served: Served[] = [];
  try {
    for (const v of variants.length ? variants : [{ name: undefined, env: {} } as { name: string | undefined; ref?: string; env: Record<string, string> }]) {
      let root = REPO_ROOT;
      let describe = `current build (commit ${gitDescribe()})`;
      if (v.ref !== undefined) {
        const built = refBuilds.get(v.ref) ?? buildRef(v.ref, log);
        refBuilds.set(v.ref, built);
        root = built.root;
        describe = `${built.commit.startsWith(v.ref) ? "" : `${v.ref} = `}${built.commit.slice(0, 7)} (${gitSubject(built.commit)}), built in a temporary worktree (node_modules ${built.modules})`;
      }
      const cuts = (v as { cuts?: CutName[] }).cuts ?? opts.ablate;
      if (cuts?.length) {
        const key = `${root}\0${cuts.join("+")}`;
        const copy = ablatedCopies.get(key) ?? ablatedBuild(cuts, root);
        ablatedCopies.set(key, copy);
        root = copy.root;
        describe += ` without ${cuts.join(", ")} (ablated)`;
      }
      const envText = Object.entries(v.env).map(([k, x]) => `${k}=${x}`).join(" ");
      if (envText) describe += ` with ${envText}`;
      const store = v.env.FS_STORE ?? opts.store ?? "lmdb";
      served.push({ variant: v.name, describe, root, env: v.env, postgres: store === "postgres", ablated: Boolean(cuts?.length) });
    }
  } catch (err) {
    cleanupBuilds();
    throw err;
  }
  const ablated = served.some((s) => s.ablated) ? true : null;

  const hello = await startHello().catch((err: unknown) => {
    cleanupBuilds();
    throw err;
  });
  const stopAll = async (): Promise<void> => {
    await hello.stop();
    for (const s of served) {
      await s.service?.stop();
      s.service?.cleanup();
    }
    await pg?.destroy();
    cleanupBuilds();
  };
  let pg: Awaited<ReturnType<typeof startPostgres>> | null = null;
  try {
    pg = served.some((s) => s.postgres) ? await startPostgres({ durable: true }) : null;
    for (const [i, s] of served.entries()) {
      const databaseUrl = s.postgres ? await pg!.createDatabase(i === 0 ? "fs_bench" : `fs_bench_${i}`) : undefined;
      s.service = await startService({ datasetsFrom: dataDir, poolThreads: opts.poolThreads, root: s.root, databaseUrl, env: s.env, name: s.variant === undefined ? "service" : `service@${s.variant}` });
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  const services = served.map((s) => s.service!);
  const series: Series[] = [];
  try {
    /** Armed scenarios in groups: hello alone, then each service scenario once per variant. */
    const groups: Armed[][] = [];
    for (const scenario of scenarios) {
      if (opts.only && scenario.name !== BASELINE && !opts.only.includes(scenario.name)) continue;
      const targets = scenario.server === "hello" ? [{ server: hello as ServerProcess, variant: undefined as string | undefined, postgres: false }] : served.map((s) => ({ server: s.service! as ServerProcess, variant: s.variant, postgres: s.postgres }));
      const group: Armed[] = [];
      for (const { server, variant, postgres } of targets) {
        const name = variantScenarioName(scenario.name, variant);
        try {
          const prepared = await scenario.setup(server);
          await verify(scenario, server, prepared);
          group.push({ name, scenario, server, postgres, prepared, expectedSeen: prepared.paths.length, loadRuns: 0 });
          log(`verified ${name}: ${prepared.paths.length} path(s) answered ${scenario.expectedStatus} with the expected body`);
        } catch (err) {
          problems.push(`${name}: not measured: ${err instanceof Error ? err.message : String(err)}`);
          log(`NOT MEASURED ${name}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      if (group.length) groups.push(group);
    }
    const armed = groups.flat();

    const load = (a: Armed, durationS: number): Load => ({
      url: a.server.url,
      paths: a.prepared.paths,
      headers: a.prepared.headers,
      method: a.prepared.method,
      bodies: a.prepared.bodies,
      connections: opts.connections,
      durationS,
    });
    const account = (a: Armed, m: Measurement): { unexpected: number } => {
      // Exact where the generator counts per status; else wrk's split at 400 is what there is.
      const want = a.scenario.expectedStatus;
      const expectedCount = m.byStatus ? (m.byStatus[want] ?? 0) : want >= 400 ? m.errorStatuses : m.requests - m.errorStatuses;
      a.expectedSeen += expectedCount;
      a.loadRuns++;
      return { unexpected: m.requests - expectedCount };
    };

    if (opts.warmupS > 0) {
      for (const a of armed) {
        const m = await generators[0]!.run(load(a, opts.warmupS));
        account(a, m);
        log(`warm-up ${a.name}: ${Math.round(m.rps)} req/s (not counted)`);
        await pause();
      }
    }

    for (const g of generators) for (const a of armed) series.push({ scenario: a.name, generator: g.name, target: a.scenario.target, cpuTarget: a.scenario.cpuTarget, runs: [], unexpected: 0, socketErrors: 0 });
    for (let round = 1; round <= opts.rounds; round++) {
      for (const g of generators) {
        // Variants of a scenario run back to back, in reverse order every other round (variants.ts).
        for (const a of groups.flatMap((group) => variantOrder(group, round))) {
          const dbPid = a.postgres ? pg?.pid() : undefined;
          const before = readCpu(a.server.pid, dbPid);
          const m = await g.run(load(a, opts.durationS));
          m.cpu = cpuSpent(before, readCpu(a.server.pid, dbPid), g.runsIn);
          const s = series.find((x) => x.scenario === a.name && x.generator === g.name)!;
          s.runs.push(m);
          const { unexpected } = account(a, m);
          s.unexpected += unexpected;
          s.socketErrors += m.socketErrors;
          log(
            `round ${round}/${opts.rounds} ${g.name.padEnd(10)} ${a.name.padEnd(15)} ${String(Math.round(m.rps)).padStart(7)} req/s  ` +
              `p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms${unexpected || m.socketErrors ? `  (${unexpected} unexpected statuses, ${m.socketErrors} socket errors)` : ""}`,
          );
          await pause();
        }
      }
    }

    for (const s of series) {
      if (s.unexpected) problems.push(`${s.scenario} (${s.generator}): ${s.unexpected} responses without the expected status`);
      if (s.socketErrors) problems.push(`${s.scenario} (${s.generator}): ${s.socketErrors} connection errors or timeouts`);
    }
    if (ablated) notes.push("checks after the runs skipped for ablated builds: they keep, store and charge less on purpose");
    for (const a of armed) {
      if (!a.prepared.afterRuns || a.server.ended() || served.find((s) => s.service === a.server)?.ablated) continue;
      const { ok, line } = await a.prepared.afterRuns(a.expectedSeen, a.loadRuns * opts.connections);
      (ok ? notes : problems).push(`${a.name}: ${line}`);
    }
  } finally {
    // hello.ts installs no signal handler, so SIGTERM ends it by signal; the service exits 0.
    for (const [server, clean] of [[hello, ["exit 0", "signal SIGTERM"]] as const, ...services.map((s) => [s, ["exit 0"]] as const)]) {
      const before = server.ended();
      const how = await server.stop();
      if (before) problems.push(`${server.name} died during the run (${before})`);
      else if (!(clean as readonly string[]).includes(how)) problems.push(`${server.name} did not stop cleanly on SIGTERM (${how})`);
    }
    for (const s of services) s.cleanup();
    await pg?.destroy();
    cleanupBuilds();
  }
  for (const s of services) problems.push(...logProblems(s.output()).map((p) => (services.length > 1 ? `${s.name}: ${p}` : p)));

  const rows = toRows(series, BASELINE);
  notes.push(...generatorNotes(rows));
  const missed = rows.filter((r) => r.verdict === "MISSED").map((r) => `${r.series.scenario} (${r.series.generator}) ${r.ratio!.toFixed(2)} < ${r.series.target}`);
  const markdown = [
    `## HTTP: service${pg ? " (FS_STORE=postgres)" : ""} vs uWS hello world (${new Date().toISOString()})`,
    "",
    ...(ablated
      ? [
          opts.ablate?.length
            ? `**ABLATED BUILD, not the product**: cut ${opts.ablate.join(", ")} (bench/http/ablate.ts); its answers are wrong on purpose.`
            : `**ABLATED VARIANTS, not the product**: ${served.filter((s) => s.ablated).map((s) => s.variant).join(", ")} (bench/http/ablate.ts); their answers are wrong on purpose.`,
          "",
        ]
      : []),
    ...contextLines(opts, generators, dataDir, served).map((l) => `- ${l}`),
    "",
    markdownTable(rows),
    "",
    ...(variants.length > 1 ? ["Variants side by side: ratio to the same hello world (service and main-thread CPU µs per response); then each variant against the one before it, as factors of req/s and of service CPU per response:", "", variantTable(rows, served.map((s) => s.variant!)), ""] : []),
    missed.length ? `**MISSED** targets: ${missed.join("; ")}` : "All targets met.",
    "",
    ...cpuSection(rows),
    ...notes.map((n) => `- ${n}`),
    ...(problems.length ? ["", "**Problems**", "", ...problems.map((p) => `- ${p}`)] : [`- no problems: every response had the expected status, ${services.length > 1 ? "every server" : "both servers"} stopped cleanly`]),
    "",
  ].join("\n");
  return { markdown, clean: problems.length === 0, series };
}

/** The CPU table and what it means, or nothing where /proc gave no figures. */
function cpuSection(rows: Row[]): string[] {
  const table = cpuTable(rows, cores());
  if (!table) return [];
  return [
    `CPU per response, medians over the rounds (from /proc; ${cores()} cores here). The ceilings are the highest ratio to hello world each scenario could reach at this CPU cost: with every core busy (service and generator together), and with the service's main thread busy alone.`,
    "",
    table,
    "",
  ];
}

/** What a reader needs to weigh the generators against each other. */
function generatorNotes(rows: Row[]): string[] {
  const notes = ["autocannon records latency in whole milliseconds; wrk's p50/p99 are finer"];
  const helloRps = (g: string): number | undefined => rows.find((r) => r.series.scenario === BASELINE && r.series.generator === g)?.rps;
  const ac = helloRps("autocannon");
  const wrk = helloRps("wrk");
  if (ac !== undefined && wrk !== undefined && ac < 0.8 * wrk) {
    notes.push(
      `autocannon is the bottleneck here (hello world: ${Math.round(ac)} req/s vs ${Math.round(wrk)} under wrk), which pulls its ratios towards 1; wrk's ratios are the sharper comparison`,
    );
  }
  return notes;
}

/** Every path once, in order: status and body must be what the scenario expects. */
async function verify(scenario: Scenario, server: ServerProcess, prepared: Prepared): Promise<void> {
  const method = prepared.method ?? "GET";
  for (const [i, path] of prepared.paths.entries()) {
    const res = await fetch(server.url + path, { method, headers: prepared.headers, body: prepared.bodies?.[i] });
    const text = await res.text();
    if (res.status !== scenario.expectedStatus) throw new Error(`${method} ${path}: status ${res.status}, expected ${scenario.expectedStatus}: ${text.slice(0, 300)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: body is not JSON: ${text.slice(0, 300)}`);
    }
    const problem = scenario.check(path, body);
    if (problem) throw new Error(`${method} ${path}: ${problem}: ${text.slice(0, 300)}`);
  }
}

/** Error and warning lines the service logged (the service logs JSON lines). */
function logProblems(output: string): string[] {
  const lines = output.split("\n").filter((l) => /"level":"(error|warn)"/.test(l) || /^(fatal|Error|\s+at )/.test(l));
  if (lines.length === 0) return [];
  const shown = lines.slice(0, 10).map((l) => `service log: \`${l.slice(0, 400)}\``);
  return lines.length > 10 ? [...shown, `service log: ... ${lines.length - 10} more`] : shown;
}

function contextLines(opts: HttpBenchOptions, generators: LoadGenerator[], dataDir: string, served: Served[]): string[] {
  const dataset = currentIpDatasetDir(dataDir);
  return [
    machineLine(),
    `commit ${gitDescribe()}`,
    `service: dist/src/main.js, FS_POOL_THREADS=${opts.poolThreads}, dataset ${dataset ? basename(dataset) : "?"} (temporary DATA_DIR, datasets linked from ${dataDir})`,
    ...served.filter((s) => s.variant !== undefined).map((s) => `variant \`${s.variant}\`: ${s.describe}`),
    ...(served.length > 1 ? ["variants: one service process each, a scenario's variants measured back to back in every round, in reverse order every other round"] : []),
    `load: ${opts.connections} connections, pipelining 1, ${opts.durationS} s per run, ${opts.rounds} interleaved round(s) (medians shown), warm-up ${opts.warmupS} s per scenario (autocannon, not counted)`,
    `generators: ${generators.map((g) => `${g.version} (${g.settings})`).join("; ")}`,
    "generator, baseline and service share this machine's cores; compare ratios, not absolute req/s",
  ];
}

function gitDescribe(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: REPO_ROOT, encoding: "utf8" }).trim() !== "";
    return dirty ? `${head} + uncommitted changes` : head;
  } catch {
    return "unknown (not a git checkout)";
  }
}

function gitSubject(commit: string): string {
  try {
    const subject = execFileSync("git", ["log", "-1", "--format=%s", commit], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    return subject.length > 70 ? `${subject.slice(0, 67)}...` : subject;
  } catch {
    return "?";
  }
}

function log(line: string): void {
  console.log(`  [http] ${line}`);
}

function pause(): Promise<void> {
  return new Promise((r) => setTimeout(r, PAUSE_MS));
}
