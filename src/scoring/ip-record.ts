import type { IpCompany, IpFacts } from "../datasets/ip-facts.js";

/** The IP record (docs/api.md, "GET /v1/ip/{ip}"). */
export interface IpRecord {
  ip: string;
  ip_version: 4 | 6;
  /** Special-purpose space, not globally reachable (shared/bogon.ts): no dataset says anything about it. */
  bogon: boolean;
  network: {
    asn: number | null;
    org: string | null;
    hostname: string | null;
    hostname_verified: boolean | null;
    cloud_provider: string | null;
    cloud_region: string | null;
  };
  company?: IpCompany | null;
  location: { country: string | null };
  type: IpFacts["type"];
  risk: IpFacts["risk"];
  flags: string[];
  /**
   * An addition to the record: who is behind a flag, where a source names it. `vpn_provider` (e.g.
   * "Mullvad", "iCloud Private Relay"), `scanner_org` (e.g. "shodan"), and `crawler`, the most
   * specific published crawler or monitor range ({id, operator}); null when no source names one.
   */
  details: { vpn_provider: string | null; scanner_org: string | null; crawler: IpFacts["crawler"] };
}

/** What the caller asked to add to the base record (`include`). */
export interface RecordOptions {
  region: boolean;
  company: boolean;
  /** Set when rdns ran: its answer. */
  rdns?: { hostname: string | null; verified: boolean | null };
}

/**
 * The record for one address. Base fields always; `network.cloud_*` only with region, `company`
 * only with company (absent otherwise), `network.hostname*` only with rdns.
 */
export function buildIpRecord(ip: string, ipVersion: 4 | 6, bogon: boolean, facts: IpFacts, opts: RecordOptions): IpRecord {
  const record: IpRecord = {
    ip,
    ip_version: ipVersion,
    bogon,
    network: {
      asn: facts.asn,
      org: facts.org,
      hostname: opts.rdns ? opts.rdns.hostname : null,
      hostname_verified: opts.rdns ? opts.rdns.verified : null,
      cloud_provider: opts.region ? facts.cloud_provider : null,
      cloud_region: opts.region ? facts.cloud_region : null,
    },
    location: { country: facts.country },
    type: facts.type,
    risk: facts.risk,
    flags: flagsOf(facts.type, facts.risk),
    details: { vpn_provider: facts.vpn_provider, scanner_org: facts.scanner_org, crawler: facts.crawler },
  };
  if (opts.company) {
    // Keep the documented field order: company after network.
    const { location, type, risk, flags, details, ...head } = record;
    return { ...head, company: facts.company, location, type, risk, flags, details };
  }
  return record;
}

/** Names of the true type and risk attributes, type first, in field order. */
export function flagsOf(type: object, risk: object): string[] {
  const flags: string[] = [];
  for (const [k, v] of Object.entries(type)) if (v === true) flags.push(k);
  for (const [k, v] of Object.entries(risk)) if (v === true) flags.push(k);
  return flags;
}

/**
 * Serialisations without rdns, per facts object and include variant (region x company). Facts
 * objects are shared by every address of a range, so the cache almost always hits.
 */
const fragmentCache = new WeakMap<IpFacts, string[]>();
const SAFE_IP = /^[0-9A-Fa-f:.]{1,45}$/;

/**
 * The same text as `JSON.stringify(buildIpRecord(ip, ipVersion, facts, opts))` for calls without
 * rdns, built from a cached serialisation of everything that does not depend on the address.
 */
export function ipRecordJson(ip: string, ipVersion: 4 | 6, bogon: boolean, facts: IpFacts, opts: RecordOptions): string {
  // A parsed address is hex digits, dots and colons: nothing to escape (the slow path covers the rest).
  const quoted = SAFE_IP.test(ip) ? `"${ip}"` : JSON.stringify(ip);
  if (opts.rdns) return JSON.stringify(buildIpRecord(ip, ipVersion, bogon, facts, opts));
  const variant = (opts.region ? 1 : 0) | (opts.company ? 2 : 0);
  let fragments = fragmentCache.get(facts);
  if (!fragments) {
    fragments = [];
    fragmentCache.set(facts, fragments);
  }
  let fragment = fragments[variant];
  if (fragment === undefined) {
    const full = JSON.stringify(buildIpRecord("", ipVersion, false, facts, opts));
    // Drop `{"ip":"","ip_version":N,"bogon":false,` from the front; the rest does not depend on the address.
    fragment = full.slice(full.indexOf(',"network"') + 1);
    fragments[variant] = fragment;
  }
  return `{"ip":${quoted},"ip_version":${ipVersion},"bogon":${bogon},${fragment}`;
}
