import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric, type MetricObjectWithValues, type MetricValue } from "prom-client";
import type { IpDatasetHolder } from "../datasets/holder.js";
import { coverageOf } from "../datasets/coverage.js";
import type { Logger } from "../shared/log.js";
import type { StoreClient } from "../store/front/client.js";
import type { ScoringPool } from "./scoring-pool.js";
import type { ResponseState } from "../http/respond.js";
import type { BodyIntake } from "../http/body.js";
import { checkDecisions, creditsCharged, quotaRefusals } from "./counters.js";

/**
 * The service's Prometheus metrics (GET /metrics, docs/operations.md "Metrics"), through
 * prom-client. On the request path there is one histogram observation per answer (RequestLatency,
 * below); everything else (pool, writer backlog, dataset age) is read when the endpoint is scraped.
 */

/** Latency buckets, in seconds: the service answers in tens of microseconds to a few milliseconds. */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** A journal whose records the writer applies after they are written (charges, observations). */
export interface JournalProgress {
  name: string;
  /** Highest sequence number written (or queued for the next write). */
  written(): number;
  /** Highest sequence number the writer has applied. */
  applied(): number;
}

export interface MetricsSources {
  pool: ScoringPool;
  store: StoreClient;
  ipDatasets: IpDatasetHolder;
  journals: JournalProgress[];
  /** Request bodies being received (body.ts). */
  bodies?: BodyIntake;
  log: Logger;
  /** Share of answers written to the access log, 0 (none) to 1 (all). */
  accessLogSample: number;
  /** The front thread's index: the process's own metrics are collected by thread 0 only. */
  thread?: number;
  /** The beacon's refusals per rate limit, and the observations its budget dropped (this thread's). */
  beacon?: { rateLimited: Readonly<Record<"address" | "project", number>>; budget: { readonly droppedByProject: ReadonlyMap<string, number> } };
  /** Test-mode keys' calls refused per bound, and their DNS lookups skipped (test-mode-budget.ts; this thread's). */
  testMode?: Readonly<Record<"second" | "day" | "dns", number>>;
}

/** Every front thread's metrics as JSON, this thread's first (several front threads: peers.ts). */
export type MetricsGatherer = (own: MetricObjectWithValues<MetricValue<string>>[]) => Promise<Array<MetricObjectWithValues<MetricValue<string>>[]>>;

/** One route, method and status: bucket counts (not cumulative), sum and count. */
interface LatencySeries {
  labels: { route: string; method: string; status: string };
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request latency histogram, as a collector prom-client's registry reads like its own
 * (name, help, type, and `get()` with the values). prom-client's Histogram hashes the label
 * values on every observation, even through a child: twice the cost of this collector, where a
 * series is found by one Map lookup and observed with a scan of 13 bounds
 * (bench/micro/metrics.bench.ts, bench/README.md).
 */
class RequestLatency {
  readonly name = "fs_http_request_duration_seconds";
  readonly help = "Time from a request's arrival to its answer, by route pattern, method and status.";
  readonly type = "histogram";
  readonly aggregator = "sum";
  /** Series by route, then by status: two lookups on strings and numbers the request already holds, no key built per answer. */
  private readonly series = new Map<string, Map<number, LatencySeries>>();

  /** `route` is `METHOD /pattern` (ResponseState.route) or "unmatched". */
  observe(route: string, status: number, seconds: number): void {
    let byStatus = this.series.get(route);
    if (!byStatus) {
      byStatus = new Map();
      this.series.set(route, byStatus);
    }
    let s = byStatus.get(status);
    if (!s) {
      const space = route.indexOf(" ");
      const labels = space > 0 ? { route: route.slice(space + 1), method: route.slice(0, space), status: String(status) } : { route, method: "", status: String(status) };
      s = { labels, buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      byStatus.set(status, s);
    }
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    s.buckets[i]!++;
    s.sum += seconds;
    s.count++;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> } {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const byStatus of this.series.values()) for (const s of byStatus.values()) {
      let cumulative = 0;
      for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: i < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[i]! : "+Inf", ...s.labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * The scoring pool's task times as a Prometheus summary: quantiles from piscina's own histograms of
 * run and queue time (since start), with `_count` the tasks completed and `_sum` their mean times
 * that count. Across front threads (several pools) the highest of each series is shown.
 */
class PoolTaskTimes {
  readonly name = "fs_pool_task_seconds";
  readonly help = "Scoring task time on a pool thread (phase=run) and in its queue (phase=wait), since start.";
  readonly type = "summary";
  readonly aggregator = "max";

  constructor(private readonly pool: ScoringPool) {}

  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> } {
    const s = this.pool.stats();
    const values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> = [];
    for (const [phase, t] of [["run", s.runMs], ["wait", s.waitMs]] as const) {
      for (const [quantile, ms] of [["0.5", t.p50], ["0.9", t.p90], ["0.99", t.p99], ["1", t.max]] as const) values.push({ labels: { phase, quantile }, value: ms / 1000 });
      values.push({ metricName: `${this.name}_sum`, labels: { phase }, value: (t.mean * s.completed) / 1000 });
      values.push({ metricName: `${this.name}_count`, labels: { phase }, value: s.completed });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests = new RequestLatency();
  private readonly sample: number;
  private readonly access: Logger;

  /** Set with several front threads: how to reach the others' metrics (GET /metrics sums them). */
  gather: MetricsGatherer | null = null;

  constructor(sources: MetricsSources) {
    const r = this.registry;
    // Memory, CPU and event-loop figures are the process's: counted once, on the first thread.
    if ((sources.thread ?? 0) === 0) collectDefaultMetrics({ register: r });
    this.sample = sources.accessLogSample;
    this.access = sources.log;
    r.registerMetric(this.requests as unknown as Metric);
    const { pool, store, ipDatasets, journals } = sources;
    // Across front threads (GET /metrics on any of them) a gauge is summed unless it says otherwise.
    const gauge = (name: string, help: string, collect: (this: Gauge<string>) => void, labelNames: string[] = [], aggregator: "sum" | "first" | "max" | "average" = "sum"): Metric =>
      new Gauge({ name, help, labelNames, registers: [r], collect, aggregator });
    gauge("fs_pool_queue_depth", "Scoring tasks waiting for a pool thread.", function () {
      this.set(pool.stats().queued);
    });
    gauge("fs_pool_threads", "Threads of the scoring pool.", function () {
      this.set(pool.threads);
    });
    gauge("fs_pool_utilization_ratio", "Share of the pool threads' capacity spent running tasks since start.", function () {
      this.set(pool.stats().utilization);
    }, [], "average");
    new Counter({
      name: "fs_pool_tasks_completed_total",
      help: "Scoring tasks the pool completed since start.",
      registers: [r],
      collect() {
        this.reset();
        this.inc(pool.stats().completed);
      },
    });
    r.registerMetric(new PoolTaskTimes(pool) as unknown as Metric);
    const commitSize = new Histogram({ name: "fs_writer_commit_intents", help: "Intents applied per writer commit.", buckets: BATCH_BUCKETS, registers: [r] });
    const commitTime = new Histogram({ name: "fs_writer_commit_seconds", help: "Time the writer thread took to apply and commit one batch.", buckets: COMMIT_BUCKETS, registers: [r] });
    store.onCommit = (c) => {
      commitSize.observe(c.intents);
      commitTime.observe(c.ms / 1000);
    };
    const bodies = sources.bodies;
    if (bodies) {
      gauge("fs_body_bytes_held", "Request-body bytes held now, by pool (public: routes reached without a secret key; webhook: Stripe's webhook; keyed: the rest).", function () {
        for (const pool of ["public", "webhook", "keyed"] as const) this.set({ pool }, bodies.budget.holding(pool));
      }, ["pool"]);
      gauge("fs_bodies_arriving", "Request bodies arriving in pieces now, watched by their deadline (FS_BODY_RATE_WINDOW_MS, FS_BODY_TIMEOUT_MS).", function () {
        this.set(bodies.deadlines.size);
      });
    }
    gauge("fs_writer_intents_in_flight", "Intents sent to the writer thread and not yet acknowledged.", function () {
      this.set(store.inFlight);
    });
    gauge(
      "fs_journal_backlog_records",
      "Records written to a journal (durable) that the writer has not applied to the store yet.",
      function () {
        for (const j of journals) this.set({ journal: j.name }, Math.max(0, j.written() - j.applied()));
      },
      ["journal"],
    );
    gauge(
      "fs_dataset_age_seconds",
      "Age of the IP dataset in service per source family: now minus the day its oldest usable source was taken from upstream.",
      function () {
        const meta = ipDatasets.get().meta;
        this.reset();
        const now = Date.now();
        for (const [family, day] of Object.entries(coverageOf(meta).families)) {
          if (day) this.set({ family }, Math.max(0, (now - Date.parse(`${day}T00:00:00Z`)) / 1000));
        }
      },
      ["family"],
      "first",
    );
    const beacon = sources.beacon;
    if (beacon) {
      // Counted on the request path as plain numbers; read here (a prom-client counter hashes its labels on every inc).
      new Counter({
        name: "fs_beacon_rate_limited_total",
        help: "Beacon writes (handshake, collect, report) refused with 429 RATE_LIMITED, by the limit reached: address or project.",
        labelNames: ["limit"],
        registers: [r],
        collect() {
          this.reset();
          for (const limit of ["address", "project"] as const) this.inc({ limit }, beacon.rateLimited[limit]);
        },
      });
      new Counter({
        name: "fs_beacon_observations_dropped_total",
        help: "Beacon hits whose full observation was not stored because a daily observation budget (FS_OBSERVATION_BUDGET_PER_DAY) was used up; their session and its verdict were still updated. By project.",
        labelNames: ["project"],
        registers: [r],
        collect() {
          this.reset();
          for (const [project, n] of beacon.budget.droppedByProject) this.inc({ project }, n);
        },
      });
    }
    const testMode = sources.testMode;
    if (testMode) {
      new Counter({
        name: "fs_test_mode_refused_total",
        help: "Calls of test-mode keys refused with 429 RATE_LIMITED by their org's test-mode budget (bound second or day), and their DNS lookups skipped (bound dns).",
        labelNames: ["bound"],
        registers: [r],
        collect() {
          this.reset();
          for (const bound of ["second", "day", "dns"] as const) this.inc({ bound }, testMode[bound]);
        },
      });
    }
    // What the service did for its users (counters.ts): read here, counted as plain numbers on the request path.
    const routeLabels = (route: string): { route: string; method: string } => {
      const space = route.indexOf(" ");
      return space > 0 ? { route: route.slice(space + 1), method: route.slice(0, space) } : { route, method: "" };
    };
    new Counter({
      name: "fs_credits_charged_total",
      help: "Credits charged, by route pattern, method and the org's plan.",
      labelNames: ["route", "method", "plan"],
      registers: [r],
      collect() {
        this.reset();
        for (const [route, plans] of creditsCharged) for (const [plan, n] of plans) this.inc({ ...routeLabels(route), plan }, n);
      },
    });
    new Counter({
      name: "fs_quota_refusals_total",
      help: "Calls refused with 429 QUOTA_EXCEEDED, by the org's plan (per route: fs_http_request_duration_seconds_count with status 429).",
      labelNames: ["plan"],
      registers: [r],
      collect() {
        this.reset();
        for (const [plan, n] of quotaRefusals) this.inc({ plan }, n);
      },
    });
    new Counter({
      name: "fs_check_decisions_total",
      help: "Decisions of POST /v1/check and /v1/check/deep as answered: allow, review or block.",
      labelNames: ["route", "method", "decision"],
      registers: [r],
      collect() {
        this.reset();
        for (const [route, decisions] of checkDecisions) for (const [decision, n] of decisions) this.inc({ ...routeLabels(route), decision }, n);
      },
    });
    gauge("fs_dataset_built_timestamp_seconds", "When the IP dataset in service was built (Unix time).", function () {
      const t = Date.parse(ipDatasets.get().meta.built_at);
      if (Number.isFinite(t)) this.set(t / 1000);
    }, [], "first");
  }

  /** One answer: its latency in the histogram, and a line in the access log if sampled. */
  record(state: ResponseState, status: number): void {
    const route = state.route ?? "unmatched";
    const seconds = (performance.now() - state.startedAt) / 1000;
    this.requests.observe(route, status, seconds);
    if (this.sample > 0 && (this.sample >= 1 || Math.random() < this.sample)) {
      this.access.info("request", { request_id: state.requestId, route, status, ms: Math.round(seconds * 1e6) / 1000 });
    }
  }

  /** The Prometheus text exposition: this thread's, or every front thread's summed. */
  async text(): Promise<string> {
    if (!this.gather) return this.registry.metrics();
    const all = await this.gather(await this.registry.getMetricsAsJSON());
    return AggregatorRegistry.aggregate(all).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

let active: ServiceMetrics | null = null;

/** Makes `metrics` the one every answer is recorded in (main.ts, once). */
export function activateMetrics(metrics: ServiceMetrics | null): void {
  active = metrics;
}

/** Records an answer in the active metrics, if any (respond.ts, for every answer written). */
export function recordAnswer(state: ResponseState, status: number): void {
  active?.record(state, status);
}
