import { envelopeProblem } from "./envelope.js";
import type { Scenario } from "./types.js";

/** GET /healthz: the router, envelope and response writing with no auth and no work. */
export const healthz: Scenario = {
  name: "healthz",
  server: "service",
  expectedStatus: 200,
  setup: async () => ({ paths: ["/healthz"], headers: {} }),
  check(_path, body) {
    const problem = envelopeProblem(body, "data");
    if (problem) return problem;
    return (body as { data: { status?: unknown } }).data.status === "ok" ? null : 'expected data.status "ok"';
  },
};
