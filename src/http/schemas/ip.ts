import { z } from "zod";
import { COMPANY_CATEGORIES, RISK_FLAGS, TYPE_FLAGS } from "../../datasets/ip-facts.js";
import { parseIp, type ParsedIp } from "../../shared/ip.js";
import { withFastPath } from "../validate.js";

/** Enrichment datasets of GET /v1/ip/{ip} (`include`). */
export const IP_DATASETS = ["region", "company", "rdns"] as const;
export type IpDatasetName = (typeof IP_DATASETS)[number];

const NONE: IpDatasetName[] = Object.freeze([]) as unknown as IpDatasetName[];

/**
 * `include`: comma-separated dataset names or `all`, as a frozen list (the router remembers it
 * per query string, so the same text gives the same array). Unknown names: 400 VALIDATION_ERROR
 * naming the field (the generic code; docs/api.md, "Decisions where the product left things open").
 */
function includeOf(raw: string | undefined, ctx: z.RefinementCtx): IpDatasetName[] {
  if (raw === undefined || raw === "") return NONE;
  // Clients send the same few include texts over and over: each is parsed once, and its list is
  // the same array every time (ip.get.ts caches metadata by it).
  const cached = includeCache.get(raw);
  if (cached !== undefined) return cached;
  const out = new Set<IpDatasetName>();
  for (const part of raw.split(",")) {
    const name = part.trim().toLowerCase();
    if (name === "all") IP_DATASETS.forEach((d) => out.add(d));
    else if ((IP_DATASETS as readonly string[]).includes(name)) out.add(name as IpDatasetName);
    else {
      ctx.addIssue({ code: "custom", message: `unknown dataset '${part.trim().slice(0, 40)}'; expected a comma-separated list of ${IP_DATASETS.join(", ")} or all.` });
      return z.NEVER;
    }
  }
  const list = Object.freeze([...out]) as unknown as IpDatasetName[];
  if (includeCache.size >= 256) includeCache.clear();
  includeCache.set(raw, list);
  return list;
}

const includeCache = new Map<string, IpDatasetName[]>();

/** Longest address text a request may give (path or body). */
export const IP_TEXT_MAX = 64;

/** An address that is not one, as the error names it. */
const notAnIp = (text: unknown) => `'${String(text).slice(0, 64)}' is not a valid IPv4 or IPv6 address.`;

/** `{ip}` as the handler gets it: the address as given (echoed as `ip`) and parsed. */
export interface IpParam {
  text: string;
  parsed: ParsedIp;
}

/**
 * `{ip}` of GET /v1/ip/{ip}: the address as given and parsed, once: the handler uses the parsed
 * value. The hottest route, so a valid address skips zod (withFastPath, ~0.25 µs of zod per
 * request measured on top of parseIp's ~0.22 µs); the schema words the errors. Differential test:
 * test/unit/inputs.test.ts.
 */
export const ipParam = withFastPath(
  z
    .string()
    .max(IP_TEXT_MAX, { error: (issue) => notAnIp(issue.input) })
    .transform((text, ctx): IpParam => {
      const parsed = parseIp(text);
      if (parsed !== null) return { text, parsed };
      ctx.addIssue({ code: "custom", message: notAnIp(text) });
      return z.NEVER;
    })
    .describe("An IPv4 or IPv6 address; IPv6 colons may be percent-encoded."),
  (value) => {
    if (typeof value !== "string" || value.length > IP_TEXT_MAX) return undefined;
    const parsed = parseIp(value);
    return parsed === null ? undefined : { text: value, parsed };
  },
);

/** An address in a request body, parsed once (spaces around it allowed), or undefined (fast paths). */
export function bodyIpOf(value: unknown): IpParam | undefined {
  if (typeof value !== "string" || value.length > IP_TEXT_MAX) return undefined;
  const parsed = parseIp(value.trim());
  return parsed === null ? undefined : { text: value, parsed };
}

/**
 * An address in a request body (`metadata.ip` of POST /v1/check, `ip` of POST /v1/auth/check and
 * /v1/sessions/resolve, `identity.ip` of POST /v1/meter): as given and parsed, once, in the schema,
 * so a bad address is one of the body's problems (`body.metadata.ip`) with the same words as
 * `path.ip`'s, and the handler uses the parsed value. Spaces around it are allowed, as before.
 */
export const bodyIp = z
  .string()
  .max(IP_TEXT_MAX, { error: (issue) => notAnIp(issue.input) })
  .transform((text, ctx): IpParam => {
    const ip = bodyIpOf(text);
    if (ip !== undefined) return ip;
    ctx.addIssue({ code: "custom", message: notAnIp(text) });
    return z.NEVER;
  })
  .describe("An IPv4 or IPv6 address.");

/*
 * Response schemas of GET /v1/ip/{ip}: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const flagName = z.enum([...TYPE_FLAGS, ...RISK_FLAGS]);
const nullableString = (description: string) => z.string().nullable().describe(description);

/** `data` of GET /v1/ip/{ip}: the IP record (scoring/ip-record.ts). */
export const ipRecordResponse = z.object({
  ip: z.string().describe("The address as given in the path."),
  ip_version: z.literal([4, 6]).describe("6 also for IPv4-mapped IPv6 addresses."),
  bogon: z
    .boolean()
    .describe(
      "The address is in IANA special-purpose space that is not globally reachable (private, loopback, link-local, shared, documentation, benchmarking, multicast, reserved): nothing is found for it, and the lookup costs no credit.",
    ),
  network: z.object({
    asn: z.number().int().nullable().describe("Autonomous system number; null when the address is in no announced range."),
    org: nullableString("AS organisation name as published upstream."),
    hostname: nullableString("Reverse DNS name; null unless include has rdns and a name was found."),
    hostname_verified: z.boolean().nullable().describe("The name resolves back to the address (forward-confirmed); null unless include has rdns."),
    cloud_provider: nullableString("Lower-case cloud operator id (aws, gcp, azure, ...); null unless include has region."),
    cloud_region: nullableString("The operator's region name (us-east-1, ...); null unless include has region, or when its feed has none."),
  }),
  company: z
    .object({
      name: z.string(),
      website: z.string().nullable(),
      country: z.string().nullable(),
      category: z.enum(COMPANY_CATEGORIES),
      confidence: z.enum(["high", "medium", "low"]),
    })
    .nullable()
    .optional()
    .describe("The network's operator, derived from its ASN; present only with include=company (null without an ASN)."),
  location: z.object({ country: nullableString("ISO 3166-1 alpha-2 country code.") }),
  type: z.object(Object.fromEntries(TYPE_FLAGS.map((f) => [f, z.boolean()])) as Record<(typeof TYPE_FLAGS)[number], z.ZodBoolean>),
  risk: z.object(Object.fromEntries(RISK_FLAGS.map((f) => [f, z.boolean()])) as Record<(typeof RISK_FLAGS)[number], z.ZodBoolean>),
  flags: z.array(flagName).describe("Names of the true type and risk attributes, type first."),
  details: z.object({
    vpn_provider: nullableString("VPN provider, when a source names it."),
    scanner_org: nullableString("Scanning organisation, when a source names it."),
    crawler: z.object({ id: z.string(), operator: z.string() }).nullable().describe("The most specific published crawler or monitor range covering the address."),
  }),
});

/** Where each true flag (and `crawler`) came from: `metadata.provenance` of an IP answer. */
export const ipProvenance = z
  .partialRecord(z.enum([...TYPE_FLAGS, ...RISK_FLAGS, "crawler"]), z.object({ source: z.string(), data_date: z.string().nullable() }))
  .describe("For each true flag (and crawler), the source that set it and that source's own date.");

/** Metadata fields of an IP answer (GET /v1/ip/{ip}; datasets/coverage.ts for `coverage`). */
export const ipMetadata = {
  source: z.string().describe("What the dataset build used."),
  built_at: z.string().describe("When the build ran, ISO 8601 UTC."),
  coverage: z.object({
    usable: z.number().int().min(0),
    listed: z.number().int().min(0),
    families: z.record(z.string(), z.iso.date().nullable()).describe("Per source family: the date its oldest dated usable source was taken, or null."),
    partial: z.array(z.string()),
    absent: z.array(z.string()),
  }),
  enrichment: z.object({
    requested: z.array(z.enum(IP_DATASETS)),
    resolved: z.array(z.enum(IP_DATASETS)),
    skipped: z.array(z.enum(IP_DATASETS)).optional().describe("Requested datasets this build or lookup could not answer."),
    cache: z
      .object({ rdns: z.enum(["hit", "miss", "test_budget"]) })
      .optional()
      .describe("With rdns: whether DNS was queried (miss, +1 credit); test_budget: not looked up, a test-mode key whose org spent its DNS lookups (the address was not cached)."),
    credits: z.number().int().min(0).describe("Credits charged: 0 for a bogon."),
  }),
  provenance: ipProvenance,
};

/** Query parameters of GET /v1/ip/{ip}. */
export const ipQuery = {
  include: z
    .string()
    .optional()
    .transform(includeOf)
    .describe(`Comma-separated enrichments: ${IP_DATASETS.join(", ")}, or all. region and company are free; rdns costs 1 more credit when it queries DNS.`),
};

/** Most addresses in one POST /v1/ip/batch. */
export const IP_BATCH_MAX = 100;
/** Enrichments a batch may ask for: the free ones (rdns waits on DNS per address: GET /v1/ip/{ip}). */
export const IP_BATCH_DATASETS = ["region", "company"] as const;

/** Body of POST /v1/ip/batch. */
export const ipBatchBody = z.strictObject({
  ips: z
    .array(ipParam)
    .min(1, "give at least one address")
    .max(IP_BATCH_MAX, `at most ${IP_BATCH_MAX} addresses`)
    .describe(`1 to ${IP_BATCH_MAX} IPv4 or IPv6 addresses, answered in this order.`),
  include: z
    .array(z.enum(IP_BATCH_DATASETS))
    .max(IP_BATCH_DATASETS.length)
    .optional()
    .describe("Free enrichments for every address: region, company (rdns only per address, with GET /v1/ip/{ip})."),
});

/** `data` of POST /v1/ip/batch. */
export const ipBatchResponse = z.object({
  items: z
    .array(z.object({ record: ipRecordResponse, provenance: ipProvenance }))
    .describe("One per address asked, in the order asked: its record as GET /v1/ip/{ip} gives it, and where each of its true flags came from."),
});

/** Metadata of POST /v1/ip/batch. */
export const ipBatchMetadata = {
  source: ipMetadata.source,
  built_at: ipMetadata.built_at,
  coverage: ipMetadata.coverage,
  enrichment: z.object({
    requested: z.array(z.enum(IP_BATCH_DATASETS)),
    resolved: z.array(z.enum(IP_BATCH_DATASETS)),
    skipped: z.array(z.enum(IP_BATCH_DATASETS)).optional().describe("Requested datasets this build cannot answer (region without a cloud feed)."),
    credits: z.number().int().min(0).describe("Credits charged: one per distinct address that is not a bogon."),
  }),
};
