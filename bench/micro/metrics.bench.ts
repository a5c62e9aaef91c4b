/**
 * What GET /metrics costs on the request path: ServiceMetrics.record, the one call every answer
 * makes (a Map lookup of the route and status child, one histogram observation, the access-log
 * sampling test), for a route already seen, with the access log off and at 1% sampling.
 *
 *   node dist/bench/micro/metrics.bench.js
 *
 * The pool, the writer client and the dataset holder are only read when the endpoint is scraped,
 * so plain stand-ins do here; a scrape (registry.metrics(), with prom-client's process metrics)
 * is timed too, off the request path. prom-client's own labelled Histogram (a cached child) is
 * measured beside it as the contender. The access log writes to a null logger, so the 1% row is
 * the sampling and the line's fields, not the write.
 */
import { Histogram, Registry } from "prom-client";
import { Bench } from "tinybench";
import { ServiceMetrics, type MetricsSources } from "../../src/front/metrics.js";
import type { ResponseState } from "../../src/http/respond.js";
import type { Logger } from "../../src/shared/log.js";
import { machineLine, microRow } from "../lib/context.js";

const TIME_MS = 1000;
const WARMUP_MS = 250;

const quiet: Logger = { error() {}, warn() {}, info() {}, debug() {} };
const times = { p50: 1, p90: 2, p99: 3, max: 4 };

function metricsWith(sample: number): ServiceMetrics {
  const sources = {
    pool: { threads: 1, stats: () => ({ queued: 0, completed: 0, utilization: 0, runMs: times, waitMs: times }) },
    store: { inFlight: 0, onCommit: undefined },
    ipDatasets: { get: () => ({ meta: { built_at: new Date().toISOString(), sources: [], registries: [] } }) },
    journals: [],
    log: quiet,
    accessLogSample: sample,
  } as unknown as MetricsSources;
  return new ServiceMetrics(sources);
}

async function main(): Promise<void> {
  const off = metricsWith(0);
  const sampled = metricsWith(0.01);
  const state: ResponseState = { aborted: false, requestId: "req_bench", startedAt: performance.now(), route: "GET /v1/ip/:ip" };
  off.record(state, 200);
  sampled.record(state, 200);
  if (!(await off.text()).includes('fs_http_request_duration_seconds_count{route="/v1/ip/:ip",method="GET",status="200"} 1')) {
    throw new Error("metrics check: the recorded answer is not in the exposition");
  }

  // The contender: prom-client's own labelled histogram, through a cached child, same buckets.
  const promHist = new Histogram({ name: "contender_seconds", help: "h", labelNames: ["route", "method", "status"], buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], registers: [new Registry()] });
  const child = promHist.labels("/v1/ip/:ip", "GET", "200");

  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  bench
    .add("record an answer (access log off)", () => {
      off.record(state, 200);
    })
    .add("record an answer (access log at 1%)", () => {
      sampled.record(state, 200);
    })
    .add("prom-client Histogram child: observe (contender)", () => {
      child.observe((performance.now() - state.startedAt) / 1000);
    })
    .add("performance.now() alone", () => {
      state.startedAt = performance.now() - 0.05;
    })
    .add("scrape: registry.metrics() (off the request path)", async () => {
      await off.text();
    });
  await bench.run();
  console.log(machineLine());
  console.table(bench.tasks.map(microRow));
}

void main();
