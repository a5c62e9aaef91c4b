import { ipRecordJson } from "../../scoring/ip-record.js";
import { isBogon } from "../../shared/bogon.js";
import { formatIp } from "../../shared/ip.js";
import type { AppDeps } from "../deps.js";
import { RawJson } from "../respond.js";
import { defineRoute } from "../route.js";
import { ipBatchBody, ipBatchMetadata, ipBatchResponse, IP_BATCH_MAX, type IpDatasetName } from "../schemas/ip.js";
import { hasRegionFeeds, ipGet, provenanceFields } from "./ip.get.js";

/** The services this file's route uses (of AppDeps). */
type Deps = Pick<AppDeps, "beacon" | "ipDatasets" | "rdns" | "testMode">;

/** One credit per distinct address that is not a bogon, as GET /v1/ip/{ip} charges each. */
const CREDITS_PER_ADDRESS = 1;

/**
 * POST /v1/ip/batch: the records of up to IP_BATCH_MAX addresses in one call (docs/api.md,
 * "POST /v1/ip/batch"), each as GET /v1/ip/{ip} gives it, looked up on the front thread as that
 * route does. All or nothing: one address that is not one refuses the whole batch (400, naming
 * `body.ips.<n>`), and a batch that costs more than the org has left is refused whole (429).
 */
export function ipBatchPost(deps: Deps) {
  const single = ipGet(deps).docs;
  const example = single.example!.response as Record<string, unknown>;
  const exampleMeta = single.example!.metadata as Record<string, unknown>;
  return defineRoute({
    method: "post",
    pattern: "/v1/ip/batch",
    auth: { kind: "secret" },
    body: ipBatchBody,
    minCredits: CREDITS_PER_ADDRESS,
    free: ({ body }) => body.ips.every(({ parsed }) => isBogon(parsed)),
    docs: {
      summary: "Look up several IP addresses",
      description: [
        `The records of 1 to ${IP_BATCH_MAX} addresses in one call, in the order given, each as \`GET /v1/ip/{ip}\` answers it, with the provenance of its true flags beside it.`,
        "One credit per distinct address that is not a bogon (a repeated address is answered each time and charged once; bogons are free). All or nothing: an entry that is not an address refuses the batch (400 naming `body.ips.<n>`), and a batch that costs more credits than the org has left is refused whole (429); nothing is charged then.",
        "`include` takes the free enrichments `region` and `company`; reverse DNS waits on DNS per address and stays with `GET /v1/ip/{ip}?include=rdns`.",
      ].join("\n\n"),
      tag: "ip",
      response: ipBatchResponse,
      metadata: ipBatchMetadata,
      // One per address up to the most (0, for bogons only, is stated for every keyed route).
      credits: Array.from({ length: IP_BATCH_MAX * CREDITS_PER_ADDRESS }, (_, n) => n + 1),
      errors: ["VALIDATION_ERROR"],
      example: {
        body: { ips: ["8.8.8.8", "10.0.0.1"], include: ["company"] },
        response: {
          items: [
            { record: example, provenance: exampleMeta.provenance },
            {
              record: {
                ip: "10.0.0.1",
                ip_version: 4,
                bogon: true,
                network: { asn: null, org: null, hostname: null, hostname_verified: null, cloud_provider: null, cloud_region: null },
                company: null,
                location: { country: null },
                type: { datacenter: false, hosting: false, isp: false, mobile: false, cloud: false },
                risk: { proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false },
                flags: [],
                details: { vpn_provider: null, scanner_org: null, crawler: null },
              },
              provenance: {},
            },
          ],
        },
        metadata: {
          source: exampleMeta.source,
          built_at: exampleMeta.built_at,
          coverage: exampleMeta.coverage,
          enrichment: { requested: ["company"], resolved: ["company"], credits: 1 },
        },
      },
    },
    handle({ body }) {
      const dataset = deps.ipDatasets.get();
      const include = body.include ?? [];
      const region = include.includes("region");
      const company = include.includes("company");
      const charged = new Set<string>();
      const items: string[] = [];
      for (const { text, parsed } of body.ips) {
        const facts = dataset.lookup(parsed);
        const bogon = isBogon(parsed);
        if (!bogon) charged.add(formatIp(parsed));
        const ipVersion = parsed.version === 4 && !parsed.mapped ? 4 : 6;
        items.push(`{"record":${ipRecordJson(text, ipVersion, bogon, facts, { region, company })},"provenance":${JSON.stringify(facts.provenance)}}`);
      }
      const credits = charged.size * CREDITS_PER_ADDRESS;
      // Per build, not per address: region needs a cloud feed (a company-less address shows company: null).
      const skipped: IpDatasetName[] = region && !hasRegionFeeds(dataset.meta) ? ["region"] : [];
      return {
        data: new RawJson(`{"items":[${items.join(",")}]}`),
        credits,
        metadata: provenanceFields(dataset.meta, include, skipped, credits),
      };
    },
  });
}
