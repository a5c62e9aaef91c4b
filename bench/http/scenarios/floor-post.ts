import type { Scenario } from "./types.js";

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/**
 * The floor of a POST endpoint (bench/http/hello.ts `POST /floor`, served by the hello-world
 * process): a collect-sized JSON body read, parsed and answered one turn later, none of the
 * product's work. Its CPU per response is what any of our POST routes pays before doing anything;
 * a CPU target below it cannot be met by the routes' own code.
 */
export const floorPost: Scenario = {
  name: "floor-post",
  server: "hello",
  expectedStatus: 200,
  async setup() {
    const bodies: string[] = [];
    for (let i = 0; i < 64; i++) {
      bodies.push(
        JSON.stringify({
          kind: "page.view",
          action: "pageview",
          token: `h1.${"x".repeat(120)}${i}`,
          session_id: `s_${String(i).padStart(22, "0")}`,
          page: `/products/${i}`,
          signals: { tells: [], fp: (0x1000000 + i * 7919).toString(16).padStart(14, "0"), timing: { elapsed_ms: 800 + i, interactions: i % 5, rtt_ms: 12 }, ua: CHROME },
        }),
      );
    }
    return { method: "POST", paths: bodies.map(() => "/floor"), bodies, headers: { "content-type": "application/json", "user-agent": CHROME } };
  },
  check: (_path, body) => ((body as { data?: { ok?: unknown } } | null)?.data?.ok === true ? null : "expected data.ok true"),
};
