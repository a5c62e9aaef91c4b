import { envelopeProblem } from "./envelope.js";
import type { Scenario, ServerHandle } from "./types.js";
import { call } from "./api.js";

/** Distinct sessions (handshakes) the connections go round. */
const SESSIONS = 64;
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";


/**
 * POST /v1/collect as the beacon sends it: a publishable key, a handshake token per session, the
 * client signals; scored (UA, IP, token, tells) and journaled before the answer. After the runs,
 * every answered hit must be stored by the writer: the project's observation count is compared
 * with the 200s the generators counted.
 */
export const collect: Scenario = {
  name: "collect",
  server: "service",
  target: 0.45,
  cpuTarget: 18,
  expectedStatus: 200,
  async setup(server) {
    const org = await call(server, "POST", "/v1/admin/orgs", server.adminToken, { name: "bench collect", plan: "free" });
    const project = await call(server, "POST", `/v1/admin/orgs/${org.id}/projects`, server.adminToken, { name: "bench site" });
    const pub = await call(server, "POST", `/v1/admin/orgs/${org.id}/keys`, server.adminToken, { type: "publishable", project_id: project.id });
    const secret = await call(server, "POST", `/v1/admin/orgs/${org.id}/keys`, server.adminToken, { type: "secret" });
    const bodies: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const h = await call(server, "POST", "/v1/handshake", pub.key, {});
      bodies.push(
        JSON.stringify({
          kind: "page.view",
          action: "pageview",
          token: h.token,
          session_id: h.session_id,
          page: `/products/${i}`,
          signals: { tells: [], fp: (0x1000000 + i * 7919).toString(16).padStart(14, "0"), timing: { elapsed_ms: 800 + i, interactions: i % 5, rtt_ms: 12 }, ua: CHROME },
        }),
      );
    }
    return {
      method: "POST",
      paths: bodies.map(() => "/v1/collect"),
      bodies,
      headers: { authorization: `Bearer ${pub.key}`, "content-type": "application/json", "user-agent": CHROME },
      async afterRuns(served, slack) {
        const stored = await countObservations(server, project.id, secret.key);
        const ok = stored >= served && stored <= served + slack;
        return {
          ok,
          line: `observations ${ok ? "ok" : "MISMATCH"}: ${stored} stored for ${served} 200s counted by the generators (allowed: up to ${slack} more, answered in flight when runs stopped)`,
        };
      },
    };
  },
  check(_path, body) {
    const problem = envelopeProblem(body, "data");
    if (problem) return problem;
    const { data, metadata } = body as { data: any; metadata: { credits?: unknown } };
    if (typeof data.observation_id !== "string" || !data.observation_id.startsWith("obs_")) return `data.observation_id ${JSON.stringify(data.observation_id)}`;
    if (typeof data.session_id !== "string" || !data.session_id.startsWith("s_")) return `data.session_id ${JSON.stringify(data.session_id)}`;
    if (metadata.credits !== 0) return `metadata.credits ${JSON.stringify(metadata.credits)}, expected 0`;
    return null;
  },
};

/** Every observation of the project, counted page by page (the listing syncs with the writer first). */
async function countObservations(server: ServerHandle, projectId: string, key: string): Promise<number> {
  let count = 0;
  let cursor: string | null = "";
  while (cursor !== null) {
    const page: { items: unknown[]; next_cursor: string | null } = await call(server, "GET", `/v1/projects/${projectId}/observations?limit=100${cursor ? `&cursor=${cursor}` : ""}`, key);
    count += page.items.length;
    cursor = page.next_cursor;
  }
  return count;
}
