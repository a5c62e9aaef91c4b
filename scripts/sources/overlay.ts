/**
 * The overlay of range sources: many possibly overlapping ranges from many lists in, one sorted,
 * disjoint range list out, each piece carrying the facts of every range that covers it.
 *
 * Rules (docs/api.md, "GET /v1/ip/{ip}", states them for users; test/unit/sources-overlay.test.ts pins them):
 * - Flags are the union of every covering range's kind.
 * - Each flag's provenance, and each named value (cloud provider and region, VPN provider,
 *   scanner organisation, crawler), comes from the most specific covering range that supplies
 *   it: the smallest range; on equal size the source listed first in the manifest (`order`),
 *   then the earlier row. A cloud region is taken only from a range of the chosen provider.
 * - Neighbouring pieces are joined only when their facts are identical, so adjacent ranges with
 *   different facts stay separate.
 * Pure: no I/O; bigint bounds so IPv4 and IPv6 share the code.
 */
import type { IpCrawler } from "../../src/datasets/ip-facts.js";
import type { BigRange } from "../../src/datasets/ip-table.js";
import type { RangeKind } from "./manifest.js";

/** What one source says about its ranges. */
export interface Claim {
  kind: RangeKind;
  /** Source id, recorded as provenance. */
  source: string;
  /** Manifest position: lower wins ties between equally specific ranges. */
  order: number;
  /** Cloud/VPN provider or scanner organisation (per row or per source); null when unnamed. */
  name: string | null;
  /** Cloud region, per row. */
  region: string | null;
  /** For crawler sources. */
  crawler: IpCrawler | null;
}

/** One range of one claim. `row` orders ranges of the same source. */
export interface ClaimRange {
  start: bigint;
  end: bigint;
  claim: number;
  row: number;
}

/** Flags a range list can set, with the source that decided each. */
export type RangeFlag = "cloud" | "datacenter" | "isp" | "tor" | "vpn" | "proxy" | "scanner";

/** The facts of one piece of address space, from range sources only. */
export interface RangeFacts {
  flags: Partial<Record<RangeFlag, string>>;
  cloud_provider: string | null;
  cloud_region: string | null;
  vpn_provider: string | null;
  scanner_org: string | null;
  crawler: (IpCrawler & { source: string }) | null;
}

/** Which flags each kind sets. `cloud` implies datacenter (and so hosting). */
export const KIND_FLAGS: Readonly<Record<RangeKind, readonly RangeFlag[]>> = {
  cloud: ["cloud", "datacenter"],
  datacenter: ["datacenter"],
  isp: ["isp"],
  tor: ["tor"],
  vpn: ["vpn"],
  proxy: ["proxy"],
  scanner: ["scanner"],
  crawler: [],
};

interface Active {
  size: bigint;
  end: bigint;
  claim: Claim;
  row: number;
}

/** True when `a` is more specific than `b` (smaller; then earlier source; then earlier row). */
function moreSpecific(a: Active, b: Active): boolean {
  if (a.size !== b.size) return a.size < b.size;
  if (a.claim.order !== b.claim.order) return a.claim.order < b.claim.order;
  return a.row < b.row;
}

/** The facts of the ranges in `active` (all of which cover the piece). */
export function factsOf(active: readonly Active[]): RangeFacts {
  const flagWinner: Partial<Record<RangeFlag, Active>> = {};
  let provider: Active | undefined;
  let vpn: Active | undefined;
  let scanner: Active | undefined;
  let crawler: Active | undefined;
  for (const a of active) {
    const { kind, name } = a.claim;
    for (const flag of KIND_FLAGS[kind]) {
      const w = flagWinner[flag];
      if (!w || moreSpecific(a, w)) flagWinner[flag] = a;
    }
    if (kind === "cloud" && name !== null && (!provider || moreSpecific(a, provider))) provider = a;
    if (kind === "vpn" && name !== null && (!vpn || moreSpecific(a, vpn))) vpn = a;
    if (kind === "scanner" && name !== null && (!scanner || moreSpecific(a, scanner))) scanner = a;
    if (kind === "crawler" && a.claim.crawler && (!crawler || moreSpecific(a, crawler))) crawler = a;
  }
  let region: Active | undefined;
  if (provider) {
    for (const a of active) {
      if (a.claim.kind === "cloud" && a.claim.region !== null && a.claim.name === provider.claim.name && (!region || moreSpecific(a, region))) region = a;
    }
  }
  const flags: Partial<Record<RangeFlag, string>> = {};
  for (const flag of ["cloud", "datacenter", "isp", "tor", "vpn", "proxy", "scanner"] as const) {
    const w = flagWinner[flag];
    if (w) flags[flag] = w.claim.source;
  }
  return {
    flags,
    cloud_provider: provider?.claim.name ?? null,
    cloud_region: region?.claim.region ?? null,
    vpn_provider: vpn?.claim.name ?? null,
    scanner_org: scanner?.claim.name ?? null,
    crawler: crawler ? { id: crawler.claim.crawler!.id, operator: crawler.claim.crawler!.operator, source: crawler.claim.source } : null,
  };
}

/**
 * Overlays claim ranges into disjoint pieces.
 * @param ranges any order, may overlap and repeat; `end >= start`
 * @param claims indexed by ClaimRange.claim; each range's `region` comes from its claim, so a
 *   source whose rows carry different regions or names uses one claim per distinct value
 * @param intern maps a piece's facts to a value index (the caller dedups equal facts)
 * @returns sorted disjoint ranges whose value is `intern(facts)`; touching pieces with equal
 *   values are joined
 * @example overlayClaims([{start: 0n, end: 255n, claim: 0, row: 0}], [awsClaim], intern)
 */
export function overlayClaims(ranges: readonly ClaimRange[], claims: readonly Claim[], intern: (facts: RangeFacts) => number): BigRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: BigRange[] = [];
  let active: Active[] = [];
  let i = 0;
  let pos = 0n;
  while (i < sorted.length || active.length > 0) {
    if (active.length === 0) pos = sorted[i]!.start;
    // Ranges start at or after pos here: pos only moves to the next start or past an end.
    while (i < sorted.length && sorted[i]!.start === pos) {
      const r = sorted[i++]!;
      active.push({ size: r.end - r.start, end: r.end, claim: claims[r.claim]!, row: r.row });
    }
    // The piece ends before the next range starts or just after the first active range ends.
    let next = i < sorted.length ? sorted[i]!.start : -1n;
    for (const a of active) if (next < 0n || a.end + 1n < next) next = a.end + 1n;
    const value = intern(factsOf(active));
    const last = out[out.length - 1];
    if (last && last.value === value && last.end + 1n === pos) last.end = next - 1n;
    else out.push({ start: pos, end: next - 1n, value });
    pos = next;
    active = active.filter((a) => a.end >= pos);
  }
  return out;
}
