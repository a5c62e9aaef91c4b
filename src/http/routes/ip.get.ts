import { coverageOf, type IpCoverage } from "../../datasets/coverage.js";
import type { IpDatasetMeta, IpFacts } from "../../datasets/ip-dataset.js";
import type { QueryBudget } from "../../datasets/lookup-cache.js";
import type { KeyPrincipal } from "../../front/auth.js";
import { buildIpRecord, ipRecordJson } from "../../scoring/ip-record.js";
import { isBogon } from "../../shared/bogon.js";
import { formatIp, type ParsedIp } from "../../shared/ip.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { RawJson } from "../respond.js";
import { defineRoute, type RouteResult } from "../route.js";
import { ipMetadata, ipParam, ipQuery, ipRecordResponse, type IpDatasetName } from "../schemas/ip.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "ipDatasets" | "rdns" | "testMode">;

/** Base lookup 1 credit; rdns +1 on a cache miss only; region and company free; a bogon nothing. */
const BASE_CREDITS = 1;
const RDNS_MISS_CREDITS = 1;

/**
 * GET /v1/ip/{ip}: the IP record (docs/api.md, "GET /v1/ip/{ip}").
 * The base record and the region/company enrichments are typed-array lookups done inline on the
 * front thread (~0.2 µs, far below the ~60 µs of a pool round trip: bench/micro/pool-hop). Only
 * rdns waits, on DNS, and only when asked.
 */
export function ipGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/ip/:ip",
    auth: { kind: "secret" },
    minCredits: BASE_CREDITS,
    free: ({ params }) => isBogon(params.ip.parsed),
    params: { ip: ipParam },
    query: ipQuery,
    docs: {
      summary: "Look up an IP address",
      description: [
        "The record of one IPv4 or IPv6 address: network (ASN, organisation), country, type and risk attributes and the flags that are true, and who is behind a flag where a source names it.",
        "A bogon (private, loopback, link-local, shared, documentation, benchmarking, multicast or reserved space, not globally reachable) answers `bogon: true` with nothing found, and costs nothing.",
        "`include` adds enrichments: `region` fills network.cloud_provider and cloud_region, `company` adds `company`, `rdns` fills network.hostname and hostname_verified (forward-confirmed reverse DNS, waited for at most FS_RDNS_TIMEOUT_MS).",
        "metadata states the dataset build (`source`, `built_at`), what it covers (`coverage`), what the enrichments did (`enrichment`) and where each true flag came from (`provenance`).",
      ].join("\n\n"),
      tag: "ip",
      response: ipRecordResponse,
      metadata: ipMetadata,
      credits: [BASE_CREDITS, BASE_CREDITS + RDNS_MISS_CREDITS],
      errors: ["VALIDATION_ERROR"],
      example: {
        params: { ip: "8.8.8.8" },
        query: { include: "company" },
        response: {
          ip: "8.8.8.8",
          ip_version: 4,
          bogon: false,
          network: { asn: 15169, org: "Google LLC", hostname: null, hostname_verified: null, cloud_provider: null, cloud_region: null },
          company: { name: "Google LLC", website: null, country: "US", category: "hosting", confidence: "high" },
          location: { country: "US" },
          type: { datacenter: true, hosting: true, isp: false, mobile: false, cloud: false },
          risk: { proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false },
          flags: ["datacenter", "hosting"],
          details: { vpn_provider: null, scanner_org: null, crawler: null },
        },
        metadata: {
          source: "ip-location-db:asn+geo-whois-asn-country@2.3.2026061719 + 271/284 listed sources",
          built_at: "2026-11-20T22:15:00.000Z",
          coverage: { usable: 271, listed: 284, families: { asn: "2026-06-17", cloud: "2026-11-18", tor: "2026-11-20" }, partial: ["cloud"], absent: [] },
          enrichment: { requested: ["company"], resolved: ["company"], credits: 1 },
          provenance: { datacenter: { source: "google", data_date: "2026-11-20T06:00:00Z" }, hosting: { source: "google", data_date: "2026-11-20T06:00:00Z" } },
        },
      },
    },
    handle({ params, query, principal, nowMs }): RouteResult | Promise<RouteResult> {
      return lookupAnswer(deps, params.ip.text, params.ip.parsed, query.include, principal, nowMs);
    },
  });
}

/**
 * GET /v1/ip/me: the record of the caller's own address (the peer's, or behind a trusted proxy the
 * client's, as FS_TRUSTED_PROXIES says), as GET /v1/ip/{ip} answers it.
 */
export function ipMeGet(deps: Deps) {
  const byIp = ipGet(deps).docs;
  return defineRoute({
    method: "get",
    pattern: "/v1/ip/me",
    auth: { kind: "secret" },
    minCredits: BASE_CREDITS,
    free: ({ snap }) => {
      const parsed = deps.beacon.trusted.clientIp(snap.peer, snap.forwardedFor);
      return parsed !== null && isBogon(parsed);
    },
    clientAddress: true,
    query: ipQuery,
    docs: {
      ...byIp,
      summary: "Look up the caller's address",
      description:
        "The record of the address this call came from, as `GET /v1/ip/{ip}` gives it (same `include`, same credits): the connection's peer, or, when the peer is a proxy in FS_TRUSTED_PROXIES, the rightmost X-Forwarded-For address it did not add itself. Called from a backend, that is the backend's own egress address. `ip` states the address.",
      example: { ...byIp.example, params: undefined },
    },
    handle(ctx): RouteResult | Promise<RouteResult> {
      const parsed = deps.beacon.trusted.clientIp(ctx.snap.peer, ctx.snap.forwardedFor);
      if (!parsed) throw new ApiError("VALIDATION_ERROR", "path.ip: the connection's address could not be read.");
      return lookupAnswer(deps, formatIp(parsed), parsed, ctx.query.include, ctx.principal, ctx.nowMs);
    },
  });
}

/** The answer for one parsed address (`raw` as it is echoed in `ip`). */
function lookupAnswer(deps: Deps, raw: string, parsed: ParsedIp, include: IpDatasetName[], principal: KeyPrincipal | null, nowMs: number): RouteResult | Promise<RouteResult> {
  const dataset = deps.ipDatasets.get();
  const facts = dataset.lookup(parsed);
  const ipVersion = parsed.version === 4 && !parsed.mapped ? 4 : 6;
  const region = include.includes("region");
  const company = include.includes("company");
  if (isBogon(parsed)) return bogonAnswer(raw, ipVersion, facts, dataset.meta, include);
  if (!include.includes("rdns")) {
    return {
      data: new RawJson(ipRecordJson(raw, ipVersion, false, facts, { region, company })),
      credits: BASE_CREDITS,
      metadataJson: metadataJsonFor(dataset.meta, include, facts),
    };
  }
  // A test-mode key's lookup is on its org's DNS budget (front/test-mode-budget.ts).
  return withRdns(deps, raw, formatIp(parsed), ipVersion, facts, dataset.meta, include, deps.testMode.dnsOf(principal, nowMs));
}

/**
 * A bogon (shared/bogon.ts): the record with `bogon: true` and nothing found, charged nothing.
 * Reverse DNS is not asked (a private name says nothing about the caller): rdns is skipped.
 */
function bogonAnswer(raw: string, ipVersion: 4 | 6, facts: IpFacts, meta: IpDatasetMeta, include: IpDatasetName[]): RouteResult {
  const rdns = include.includes("rdns");
  const skipped = skippedOf(meta, include, facts);
  if (rdns) skipped.push("rdns");
  return {
    data: buildIpRecord(raw, ipVersion, true, facts, { region: include.includes("region"), company: include.includes("company"), ...(rdns ? { rdns: { hostname: null, verified: null } } : {}) }),
    credits: 0,
    metadata: { ...provenanceFields(meta, include, skipped, 0), provenance: facts.provenance },
  };
}

/** The rdns path: waits for DNS (bounded by FS_RDNS_TIMEOUT_MS), charges +1 only when it queried. */
async function withRdns(
  deps: Deps,
  raw: string,
  canonical: string,
  ipVersion: 4 | 6,
  facts: IpFacts,
  meta: IpDatasetMeta,
  include: IpDatasetName[],
  budget: QueryBudget | undefined,
): Promise<RouteResult> {
  const r = await deps.rdns.lookup(canonical, budget);
  const charged = r.outcome === "miss" && r.resolved ? RDNS_MISS_CREDITS : 0;
  const credits = BASE_CREDITS + charged;
  const skipped = skippedOf(meta, include, facts);
  if (!r.resolved) skipped.push("rdns");
  const record = buildIpRecord(raw, ipVersion, false, facts, {
    region: include.includes("region"),
    company: include.includes("company"),
    rdns: r.resolved ? { hostname: r.hostname, verified: r.verified } : { hostname: null, verified: null },
  });
  return {
    data: record,
    credits,
    metadata: { ...provenanceFields(meta, include, skipped, credits, { rdns: r.outcome }), provenance: facts.provenance },
  };
}

/**
 * metadata.source, built_at, coverage and enrichment ({requested, resolved, skipped?, cache?,
 * credits}); docs/api.md, "GET /v1/ip/{ip}".
 */
export function provenanceFields(meta: IpDatasetMeta, include: IpDatasetName[], skipped: IpDatasetName[], credits: number, cache?: Record<string, string>) {
  return {
    source: meta.source,
    built_at: meta.built_at,
    coverage: coverageFor(meta),
    enrichment: {
      requested: include,
      resolved: include.filter((d) => !skipped.includes(d)),
      ...(skipped.length > 0 ? { skipped } : {}),
      ...(cache ? { cache } : {}),
      credits,
    },
  };
}

/**
 * Datasets asked for that this build cannot answer: region needs at least one cloud feed in the
 * build (an npm-only build has none). company comes from the ASN data, always present.
 */
function skippedOf(meta: IpDatasetMeta, include: IpDatasetName[], facts: IpFacts): IpDatasetName[] {
  return include.filter((d) => (d === "region" && !hasRegionFeeds(meta)) || (d === "company" && facts.company === null));
}

const coverageCache = new WeakMap<IpDatasetMeta, IpCoverage>();
function coverageFor(meta: IpDatasetMeta): IpCoverage {
  let coverage = coverageCache.get(meta);
  if (coverage === undefined) {
    coverage = coverageOf(meta);
    coverageCache.set(meta, coverage);
  }
  return coverage;
}

const regionFeedCache = new WeakMap<IpDatasetMeta, boolean>();
export function hasRegionFeeds(meta: IpDatasetMeta): boolean {
  let has = regionFeedCache.get(meta);
  if (has === undefined) {
    has = meta.sources.some((s) => s.kind === "cloud" && (s.status ?? "ok") === "ok");
    regionFeedCache.set(meta, has);
  }
  return has;
}

/**
 * Serialised metadata fields (provenance, enrichment) for the paths without rdns, cached per
 * dataset (its meta object) and include list (the router hands the same array for the same
 * query text: inputs.ts), and per facts object for provenance.
 */
const metadataCache = new WeakMap<IpDatasetMeta, Map<IpDatasetName[], string[]>>();
const provenanceCache = new WeakMap<IpFacts, string>();
function metadataJsonFor(meta: IpDatasetMeta, include: IpDatasetName[], facts: IpFacts): string {
  let perMeta = metadataCache.get(meta);
  if (!perMeta) {
    perMeta = new Map();
    metadataCache.set(meta, perMeta);
  }
  // The enrichment lists depend on the dataset, the include list, and whether there is a company.
  const variants = perMeta.get(include) ?? [];
  const variant = facts.company === null ? 1 : 0;
  let common = variants[variant];
  if (common === undefined) {
    common = JSON.stringify(provenanceFields(meta, include, skippedOf(meta, include, facts), BASE_CREDITS)).slice(1, -1);
    variants[variant] = common;
    if (perMeta.size > 256) perMeta.clear();
    perMeta.set(include, variants);
  }
  let provenance = provenanceCache.get(facts);
  if (provenance === undefined) {
    provenance = JSON.stringify(facts.provenance);
    provenanceCache.set(facts, provenance);
  }
  return `${common},"provenance":${provenance}`;
}
