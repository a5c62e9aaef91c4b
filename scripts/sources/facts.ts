/**
 * The last step of classification: the facts of a piece of address space from its range
 * sources (overlay.ts) and from its ASN (asn-class.ts plus the ASN lists) become one stored
 * fact set. Pure.
 *
 * - datacenter/hosting: a cloud or datacenter range, else the ASN's hosting classification
 *   (list, then name). Provenance: the range source, else the list source, else the ASN input.
 * - isp: an isp range; else the ASN's name class, but only without datacenter/hosting evidence.
 * - mobile: the ASN's name class, only without datacenter/hosting evidence.
 * - vpn: a VPN range, else a VPN ASN list; vpn_provider from the range, else from the list.
 * - cloud, tor, proxy, scanner, crawler, cloud_provider/region, scanner_org: ranges only.
 * - residential_proxy: never (no source gives evidence for it).
 */
import type { AsnClass } from "../../src/datasets/asn-class.js";
import type { StoredFactSet } from "../../src/datasets/ip-dataset.js";
import type { RangeFacts } from "./overlay.js";

/** What the lists and the name classifier say about one ASN. */
export interface AsnFacts {
  cls: AsnClass;
  /** The list that made it hosting; null when not listed (a name match is credited to the ASN input). */
  hostingSource: string | null;
  /** VPN ASN list that names it, or null. */
  vpnSource: string | null;
  vpnProvider: string | null;
  /** The curated list that made it a mobile carrier, or null (a name match is credited to the ASN input). */
  mobileSource?: string | null;
}

/**
 * Combines range facts and ASN facts.
 * @param range facts of the covering range sources, or null when none covers the piece
 * @param asn facts of the piece's ASN, or null when it has none
 * @param asnSource id of the ASN input (provenance of name-based hosting, isp and mobile)
 */
export function combineFacts(range: RangeFacts | null, asn: AsnFacts | null, asnSource: string): StoredFactSet {
  const provenance: Record<string, string> = {};
  const f = range?.flags ?? {};
  const hosting = f.datacenter ?? (asn?.cls.hosting ? (asn.hostingSource ?? asnSource) : null);
  if (hosting) provenance.datacenter = provenance.hosting = hosting;
  if (f.cloud) provenance.cloud = f.cloud;
  if (f.isp) provenance.isp = f.isp;
  else if (!hosting && asn?.cls.isp) provenance.isp = asn.mobileSource ?? asnSource;
  if (!hosting && asn?.cls.mobile) provenance.mobile = asn.mobileSource ?? asnSource;
  if (f.proxy) provenance.proxy = f.proxy;
  const vpn = f.vpn ?? asn?.vpnSource ?? null;
  if (vpn) provenance.vpn = vpn;
  if (f.tor) provenance.tor = f.tor;
  if (f.scanner) provenance.scanner = f.scanner;
  const crawler = range?.crawler ?? null;
  if (crawler) provenance.crawler = crawler.source;
  return {
    provenance,
    cloud_provider: f.cloud ? (range?.cloud_provider ?? null) : null,
    cloud_region: f.cloud ? (range?.cloud_region ?? null) : null,
    vpn_provider: vpn ? (range?.vpn_provider ?? asn?.vpnProvider ?? null) : null,
    scanner_org: f.scanner ? (range?.scanner_org ?? null) : null,
    crawler: crawler ? { id: crawler.id, operator: crawler.operator } : null,
  };
}
