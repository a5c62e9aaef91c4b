import { sampleAddresses } from "../../lib/addresses.js";
import { envelopeProblem } from "./envelope.js";
import type { Scenario } from "./types.js";
import { call } from "./api.js";

/** Distinct addresses the connections go round (three IPv4 to one IPv6). */
const ADDRESSES = 256;


/**
 * GET /v1/ip/{ip}{query}, authenticated with a secret key of a `pro` org: the metered path (quota
 * check, charge to the journal) without the free plan's hard stop ending the run. Addresses
 * rotate. After the runs, the org's usage must match the 200s the generators counted.
 */
function ipScenario(name: string, query: string): Scenario {
  return {
  name,
  server: "service",
  target: 0.6,
  cpuTarget: 9,
  expectedStatus: 200,
  async setup(server) {
    const org = await call(server, "POST", "/v1/admin/orgs", server.adminToken, { name: `bench ${name}`, plan: "pro" });
    const key = await call(server, "POST", `/v1/admin/orgs/${org.id}/keys`, server.adminToken, { type: "secret" });
    const paths = sampleAddresses(ADDRESSES).map((ip) => `/v1/ip/${ip}${query}`);
    return {
      paths,
      headers: { authorization: `Bearer ${key.key}` },
      async afterRuns(served, slack) {
        // The writer applies charges in groups: read until the figure stops moving.
        let used = -1;
        for (let i = 0; i < 20; i++) {
          const now = (await call(server, "GET", `/v1/orgs/${org.id}/usage`, key.key)).used as number;
          if (now === used) break;
          used = now;
          await new Promise((r) => setTimeout(r, 250));
        }
        const ok = used >= served && used <= served + slack;
        return {
          ok,
          line: `metering ${ok ? "ok" : "MISMATCH"}: usage.used ${used} for ${served} 200s counted by the generators (allowed: up to ${slack} more, charged in flight when runs stopped)`,
        };
      },
    };
  },
  check(path, body) {
    const problem = envelopeProblem(body, "data");
    if (problem) return problem;
    const { data, metadata } = body as { data: any; metadata: { credits?: unknown } };
    const ip = decodeURIComponent(path.slice("/v1/ip/".length, query ? -query.length : undefined));
    if (data.ip !== ip) return `data.ip ${JSON.stringify(data.ip)}, expected ${ip}`;
    if (data.ip_version !== (ip.includes(":") ? 6 : 4)) return `data.ip_version ${data.ip_version} for ${ip}`;
    if (data.network?.asn !== null && typeof data.network?.asn !== "number") return "data.network.asn is neither a number nor null";
    if (data.location?.country !== null && typeof data.location?.country !== "string") return "data.location.country is neither a string nor null";
    if (metadata.credits !== 1) return `metadata.credits ${JSON.stringify(metadata.credits)}, expected 1`;
    if (query.includes("company") && !("company" in data)) return "data.company missing with include=company";
    return null;
  },
  };
}

/** The base record. */
export const ipLookup = ipScenario("ip-lookup", "");
/** The base record with the region and company enrichments (issue 3 target: 0.6 of hello world). */
export const ipEnriched = ipScenario("ip-region-company", "?include=region,company");
