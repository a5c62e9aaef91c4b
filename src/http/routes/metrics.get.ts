import { z } from "zod";
import { hashKey } from "../../shared/api-keys.js";
import type { AppDeps } from "../deps.js";
import { RawText } from "../respond.js";
import { defineRoute } from "../route.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "config" | "metrics">;

/**
 * GET /metrics: the service's metrics in the Prometheus text format (prom-client), for the admin
 * token or the scrape-only FS_METRICS_TOKEN. Not in the envelope: Prometheus reads the text at the top level. docs/operations.md,
 * "Metrics", lists every series.
 */
export function metricsGet(deps: Deps) {
  const metrics = deps.metrics;
  return defineRoute({
    method: "get",
    pattern: "/metrics",
    auth: { kind: "admin", orTokenHash: deps.config.FS_METRICS_TOKEN ? hashKey(deps.config.FS_METRICS_TOKEN) : null },
    envelope: false,
    docs: {
      summary: "Prometheus metrics",
      description:
        "The service's metrics in the Prometheus text exposition format, for the admin token or the scrape-only token FS_METRICS_TOKEN (configure the scrape job with `authorization: { credentials: <FS_METRICS_TOKEN> }`), which opens nothing else: request latency histograms per route, method and status; the scoring pool's queue depth, utilisation and task times; the writer thread's commit sizes and times and intents in flight; each journal's backlog; the IP dataset's age per source family; and the Node.js process metrics. The answer is the text itself, not the envelope; errors are in the envelope.",
      tag: "meta",
      contentType: "text/plain; version=0.0.4; charset=utf-8",
      response: z.string().describe("Prometheus text exposition format 0.0.4."),
      errors: [],
      example: { response: '# HELP fs_pool_queue_depth Scoring tasks waiting for a pool thread.\n# TYPE fs_pool_queue_depth gauge\nfs_pool_queue_depth 0\n' },
    },
    handle: async () => ({ data: new RawText(await metrics.text(), metrics.contentType) }),
  });
}
