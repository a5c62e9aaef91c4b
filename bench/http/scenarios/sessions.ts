import { envelopeProblem } from "./envelope.js";
import type { Scenario, ServerHandle } from "./types.js";
import { call } from "./api.js";


/** A pro org with a `sessions` key (no quota stop during the run). */
async function proKey(server: ServerHandle, name: string): Promise<string> {
  const org = await call(server, "POST", "/v1/admin/orgs", server.adminToken, { name, plan: "pro" });
  return (await call(server, "POST", `/v1/admin/orgs/${org.id}/keys`, server.adminToken, { type: "secret", scopes: ["sessions"] })).key;
}

/**
 * POST /v1/sessions/resolve (target, issue 19: 0.38 of hello-world): 256 bodies, users binding to
 * 64 sessions, 32 fingerprints and 128 IPs with emails, so every request updates real counts.
 * Each answer waits for the writer's transaction (the counts include this binding).
 */
export const resolve: Scenario = {
  name: "resolve",
  server: "service",
  target: 0.38,
  cpuTarget: 22,
  expectedStatus: 200,
  async setup(server) {
    const key = await proKey(server, "bench resolve");
    const bodies: string[] = [];
    for (let i = 0; i < 256; i++) {
      bodies.push(
        JSON.stringify({
          external_user_id: `user-${i % 200}`,
          observation_type: i % 3 === 0 ? "auth.signup" : "auth.login",
          session_id: `s_bench${String(i % 64).padStart(17, "0")}`,
          fingerprint: `fp${i % 32}`,
          ip: `73.15.${i % 8}.${(i % 128) + 1}`,
          email: `user-${i % 200}@example.com`,
        }),
      );
    }
    return { method: "POST", paths: bodies.map(() => "/v1/sessions/resolve"), bodies, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
  },
  check(_path, body) {
    const problem = envelopeProblem(body, "data");
    if (problem) return problem;
    const { data, metadata } = body as { data: any; metadata: { credits?: unknown } };
    if (data.bound !== true || typeof data.correlation?.accounts_sharing_session !== "number") return "no bound/correlation";
    if (metadata.credits !== 2) return `metadata.credits ${JSON.stringify(metadata.credits)}, expected 2`;
    return null;
  },
};

/**
 * POST /v1/meter (target, issue 19: 0.42): 256 identities against generous limits, so the window
 * logs stay short and every decision is an allow that the writer records.
 */
export const meter: Scenario = {
  name: "meter",
  server: "service",
  target: 0.42,
  cpuTarget: 20,
  expectedStatus: 200,
  async setup(server) {
    const key = await proKey(server, "bench meter");
    const bodies: string[] = [];
    for (let i = 0; i < 256; i++) {
      bodies.push(JSON.stringify({ resource: `api/${i % 4}`, identity: { user_id: `meter-user-${i}` }, limit: { max: 10_000, window: "1s" } }));
    }
    return { method: "POST", paths: bodies.map(() => "/v1/meter"), bodies, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
  },
  check(_path, body) {
    const problem = envelopeProblem(body, "data");
    if (problem) return problem;
    const { data, metadata } = body as { data: any; metadata: { credits?: unknown } };
    if (!["allow", "throttle", "block"].includes(data.action)) return `action ${JSON.stringify(data.action)}`;
    if (metadata.credits !== 2) return `metadata.credits ${JSON.stringify(metadata.credits)}, expected 2`;
    return null;
  },
};
