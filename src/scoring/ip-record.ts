import type { IpBase } from "../datasets/ip-dataset.js";

/** SPEC 2.3 IP record. Fields without data yet are false/null, never invented. */
export interface IpRecord {
  ip: string;
  ip_version: 4 | 6;
  network: {
    asn: number | null;
    org: string | null;
    hostname: string | null;
    hostname_verified: boolean | null;
    cloud_provider: string | null;
    cloud_region: string | null;
  };
  location: { country: string | null };
  type: { datacenter: boolean; hosting: boolean; isp: boolean; mobile: boolean; cloud: boolean };
  risk: { proxy: boolean; vpn: boolean; tor: boolean; residential_proxy: boolean; scanner: boolean };
  flags: string[];
}

/**
 * The record for one address from the base dataset (ASN, org, country). Type and risk
 * attributes need the cloud, VPN, Tor and scanner sources, which this build does not have yet,
 * so they are all false and `flags` is empty.
 */
export function buildIpRecord(ip: string, ipVersion: 4 | 6, base: IpBase): IpRecord {
  const type = { datacenter: false, hosting: false, isp: false, mobile: false, cloud: false };
  const risk = { proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false };
  return {
    ip,
    ip_version: ipVersion,
    network: {
      asn: base.asn,
      org: base.org,
      hostname: null,
      hostname_verified: null,
      cloud_provider: null,
      cloud_region: null,
    },
    location: { country: base.country },
    type,
    risk,
    flags: flagsOf(type, risk),
  };
}

/** Names of the true type and risk attributes, type first, in field order. */
export function flagsOf(type: Record<string, boolean>, risk: Record<string, boolean>): string[] {
  const flags: string[] = [];
  for (const k in type) if (type[k]) flags.push(k);
  for (const k in risk) if (risk[k]) flags.push(k);
  return flags;
}

/** Serialised record minus `ip` and `ip_version`, per dataset record object (they are shared). */
const fragmentCache = new WeakMap<IpBase, string>();

/**
 * The same text as `JSON.stringify(buildIpRecord(ip, ipVersion, base))`, built from a cached
 * serialisation of the parts that depend only on the dataset record. Many addresses share one
 * record (a range), so the cache hits almost always.
 */
export function ipRecordJson(ip: string, ipVersion: 4 | 6, base: IpBase): string {
  let fragment = fragmentCache.get(base);
  if (fragment === undefined) {
    const full = JSON.stringify(buildIpRecord("", ipVersion, base));
    // Drop `{"ip":"","ip_version":N,` from the front; the rest does not depend on the address.
    fragment = full.slice(full.indexOf(',"network"') + 1);
    fragmentCache.set(base, fragment);
  }
  return `{"ip":${JSON.stringify(ip)},"ip_version":${ipVersion},${fragment}`;
}
