import { ApiError } from "../../shared/errors.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { healthzResponse, readyzResponse } from "../schemas/health.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "auth" | "front" | "ipDatasets" | "pool" | "store">;

/** GET /healthz: the process is up and the event loop answers. */
export const healthz = defineRoute({
  method: "get",
  pattern: "/healthz",
  auth: { kind: "none" },
  docs: {
    summary: "Liveness",
    description: "The process is up and its event loop answers. Checks nothing else; GET /readyz does.",
    tag: "health",
    response: healthzResponse,
    errors: [],
    example: { response: { status: "ok" } },
  },
  handle: () => ({ data: { status: "ok" } }),
});

/**
 * GET /readyz: datasets open, store writer alive (answers a ping), pool threads answering. Without
 * the admin token it says only ready or not (a load balancer needs no more); with it, what each
 * part runs and, when not ready, what is missing.
 */
export function readyz(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/readyz",
    auth: { kind: "none" },
    docs: {
      summary: "Readiness",
      description: "Ready to serve: the IP dataset is open, the store writer answers a ping and a scoring pool thread answers, each within 2 seconds. Otherwise 503 NOT_READY with Retry-After. Without a key the answer is only `{ \"status\": \"ready\" }` (or the bare 503); with the admin token as bearer it adds the dataset build, the threads and memory, and the 503 names what is missing.",
      tag: "health",
      response: readyzResponse,
      errors: ["NOT_READY"],
      example: {
        response: {
          status: "ready",
          datasets: { ip: "ip-20261120T221500Z-1a2b3c4d" },
          writer: "alive",
          pool: { threads: 2, ip_dataset: "ip-20261120T221500Z-1a2b3c4d" },
          front: { thread: 1, threads: 2 },
          memory: { rss_bytes: 187_400_192 },
        },
      },
    },
    async handle({ snap }) {
      const admin = isAdmin(deps, snap.authorization);
      const problems: string[] = [];
      let ipVersion: string | null = null;
      try {
        deps.ipDatasets.get();
        ipVersion = deps.ipDatasets.version;
      } catch {
        problems.push("ip dataset not open");
      }
      const [writer, pool] = await Promise.all([
        within(deps.store.isAlive() ? deps.store.send({ op: "ping" }).then((a) => a.ok) : Promise.resolve(false), false),
        within(deps.pool.ping().catch(() => null), null),
      ]);
      if (!writer) problems.push("store writer not alive");
      if (!pool) problems.push("scoring pool not answering");
      if (problems.length > 0) {
        throw new ApiError("NOT_READY", admin ? `Not ready: ${problems.join("; ")}.` : "Not ready.", { headers: { "retry-after": "1" } });
      }
      if (!admin) return { data: { status: "ready" } };
      return {
        data: {
          status: "ready",
          datasets: { ip: ipVersion },
          writer: "alive",
          pool: { threads: deps.pool.threads, ip_dataset: pool!.ipDatasetVersion },
          front: { thread: deps.front.index, threads: deps.front.threads },
          memory: { rss_bytes: process.memoryUsage.rss() },
        },
      };
    },
  });
}

/** True for the admin token; anything else (none, a wrong token, an API key) gets the short answer. */
function isAdmin(deps: Deps, authorization: string): boolean {
  if (!authorization) return false;
  try {
    deps.auth.verifyAdmin(authorization);
    return true;
  } catch {
    return false;
  }
}

/** A readiness probe answers in bounded time: a stuck writer or pool counts as not ready. */
const PROBE_TIMEOUT_MS = 2000;
function within<T>(p: Promise<T>, onTimeout: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout), PROBE_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
