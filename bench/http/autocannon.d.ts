/**
 * The slice of autocannon 9's programmatic API the HTTP runner uses (the package ships no types).
 * See node_modules/autocannon/README.md, "API" and "Results".
 */
declare module "autocannon" {
  /** hdr-histogram-percentiles-obj summary; latency in ms, requests in req per 1 s sample. */
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds without a response before a request counts as a timeout. */
    timeout?: number;
    headers?: Record<string, string>;
    /** Fired in order by every connection, round and round. */
    requests?: Request[];
  }

  interface Result {
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
    "4xx": number;
    "5xx": number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }

  /** Runs one load test; without a callback the returned instance is also a promise of the result. */
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
