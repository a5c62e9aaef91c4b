import type { Scenario } from "./types.js";

/** The baseline: uWebSockets.js hello world (bench/http/hello.ts). Every ratio is against it. */
export const hello: Scenario = {
  name: "hello",
  server: "hello",
  expectedStatus: 200,
  setup: async () => ({ paths: ["/"], headers: {} }),
  check: (_path, body) => ((body as { hello?: unknown } | null)?.hello === "world" ? null : 'expected {"hello":"world"}'),
};
