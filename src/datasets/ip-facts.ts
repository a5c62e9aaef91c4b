/**
 * What the IP dataset knows about one address: the shapes the reader (ip-dataset.ts) returns and
 * the builder (scripts/data-build.ts) writes. Types and constants only.
 *
 * How each fact is decided. Sources and their kinds are listed in data/sources.json; the builder
 * (scripts/data-build.ts) applies these rules once per build, so a lookup only reads the answer.
 * Rules live in scripts/sources/overlay.ts (ranges), scripts/sources/facts.ts (ranges + ASN) and
 * src/datasets/asn-class.ts (ASN names and lists).
 *
 * - `type.cloud`: the address lies in a range that a cloud, PaaS or CDN operator publishes as its
 *   own (manifest kind `cloud`: AWS, GCP, Azure, Oracle, Linode, DigitalOcean, Vultr, Hetzner, OVH,
 *   Alibaba, Tencent, IBM, Huawei, UCloud, Scaleway, Contabo, Fly.io, Render, Cloudflare, Fastly,
 *   Bunny, CDN77, Imperva). `cloud_provider` is the operator's lower-case id ("aws", "gcp",
 *   "azure", ...). `cloud_region` is the operator's own region name where its feed has one (AWS
 *   `region` except GLOBAL, GCP `scope`, Azure `AzureCloud.<region>` tags, Oracle region, Linode and
 *   DigitalOcean geofeed region as ISO 3166-2, e.g. "US-TX"), from the most specific range of that
 *   same provider that carries a region; null for providers whose lists have none.
 * - `type.datacenter` and `type.hosting` (always equal): a `cloud` range; a `datacenter` range
 *   (hosting providers' lists such as M247, Leaseweb, GoDaddy; SaaS egress such as GitHub, Atlassian,
 *   Datadog, Telegram; all Google and Microsoft ranges; X4BNet's datacenter netblocks); an ASN on a
 *   hosting, datacenter or VPN ASN list (brianhama bad-asn-list, X4BNet datacenter and VPN ASNs); or
 *   an AS organisation name that says hosting (asn-class.ts).
 * - `type.isp`, `type.mobile`: from the AS organisation name (asn-class.ts: telecom, broadband,
 *   cable, fibre, DSL and well-known carrier brands give isp; mobile, wireless, cellular carrier
 *   names give mobile, and a mobile carrier is also an isp), or an `isp` range (Starlink's
 *   geofeed sets isp). Name-based isp and mobile are never set where there is datacenter/hosting
 *   evidence; an `isp` range is kept even then. False without evidence.
 * - `risk.tor`: a Tor relay with the Exit flag (Onionoo OR addresses).
 * - `risk.vpn`: a VPN provider's published servers or egress ranges (Mullvad, PIA, ProtonVPN,
 *   NordVPN, ExpressVPN, iCloud Private Relay, X4BNet's VPN netblocks), or an ASN on X4BNet's VPN
 *   ASN list. `vpn_provider` names the provider where the source does (list names; the VPN ASN
 *   list's comment, e.g. "M247, GB (NordVPN)" gives "NordVPN").
 * - `risk.proxy`: an open proxy's listen address (monosans/proxy-list, verified working upstream).
 * - `risk.scanner`: a named internet-scanning organisation's range (OpenFilters internet-scanners,
 *   maltrail mass scanners, sefinek scanner lists). `scanner_org` is the organisation as a
 *   lower-case id ("censys", "shodan"; maltrail's host comments are reduced to the registered
 *   domain's name, census1.shodan.io -> "shodan").
 * - `risk.residential_proxy`: always false. None of the sources gives evidence that an address is
 *   a residential proxy exit (the proxy lists name listen addresses, not exits), so it is never set.
 * - `crawler`: not a flag. The most specific published crawler or monitor range (Googlebot,
 *   Bingbot, GPTBot, ChatGPT-User, OAI-SearchBot, Applebot, ...), as `{ id, operator }`.
 * - `company`: from the ASN (asn-class.ts): name = AS organisation; category and confidence from
 *   the lists ("high") or the name ("medium", or "business"/"low" when nothing matches); country =
 *   the country of most of the ASN's ranges; website always null.
 *
 * Overlaps: flags are the union of every range that covers the address. Named values come from
 * the most specific (smallest) covering range of their kind that carries one; ties go to the
 * source listed first in data/sources.json, then to the earlier row. A range is more specific
 * than an ASN list. Provenance names, for each true flag, the source that decided it by the same
 * rule (name-based ASN facts name the ASN input, e.g. "asn-ipv4"), with that source's own date.
 * Neighbouring ranges stay separate wherever their facts differ.
 */

/** What the base dataset knows about one address. Each field is null when no source covers it. */
export interface IpBase {
  /** Autonomous system number, e.g. 15169; null when the address is in no announced range. */
  asn: number | null;
  /** AS organisation name as published upstream, e.g. "Google LLC"; null with asn, or when unnamed. */
  org: string | null;
  /** ISO 3166-1 alpha-2 country code, upper case, e.g. "US"; null when unknown (private ranges). */
  country: string | null;
}

/** The IP record's `type` attributes. */
export interface IpTypeFlags {
  datacenter: boolean;
  hosting: boolean;
  isp: boolean;
  mobile: boolean;
  cloud: boolean;
}

/** The IP record's `risk` attributes. */
export interface IpRiskFlags {
  proxy: boolean;
  vpn: boolean;
  tor: boolean;
  residential_proxy: boolean;
  scanner: boolean;
}

/** The `type` attribute names, in the record's field order. */
export const TYPE_FLAGS = ["datacenter", "hosting", "isp", "mobile", "cloud"] as const satisfies ReadonlyArray<keyof IpTypeFlags>;
/** The `risk` attribute names, in the record's field order. */
export const RISK_FLAGS = ["proxy", "vpn", "tor", "residential_proxy", "scanner"] as const satisfies ReadonlyArray<keyof IpRiskFlags>;
/** Every flag name; the keys `provenance` may carry (plus "crawler"). */
export type IpFlagName = (typeof TYPE_FLAGS)[number] | (typeof RISK_FLAGS)[number];

/** Company categories the builder assigns (see asn-class.ts). */
export const COMPANY_CATEGORIES = ["hosting", "isp", "mobile", "education", "government", "business"] as const;
export type CompanyCategory = (typeof COMPANY_CATEGORIES)[number];

/** The network's operator, derived from its ASN (the record's `company`). */
export interface IpCompany {
  /** The AS organisation name, e.g. "Amazon.com, Inc."; "AS<n>" when no source names it. */
  name: string;
  /** Always null: no source states a website, and it is never guessed from the name. */
  website: string | null;
  /** The country of most of the ASN's ranges (IPv4 and IPv6); null when none has a country. */
  country: string | null;
  /** One of COMPANY_CATEGORIES. */
  category: string;
  /** "high" from an authoritative list (hosting/datacenter/VPN ASN lists), "medium" from a specific name pattern, "low" otherwise. */
  confidence: "high" | "medium" | "low";
}

/** A published crawler or monitor range's bot. */
export interface IpCrawler {
  /** Stable id of the published list, e.g. "googlebot", "gptbot", "bingbot". */
  id: string;
  /** Who runs it, e.g. "Google", "OpenAI". */
  operator: string;
}

/** Where one fact came from. */
export interface IpProvenance {
  /** Source id from the build manifest (data/sources.json), e.g. "aws", "tor-exits". */
  source: string;
  /** That source's own timestamp (ISO 8601) when its file carries one, else null. */
  data_date: string | null;
}

/**
 * Everything the dataset says about one address. Objects are frozen and shared: the same build
 * returns the same object for every address of one table entry, so callers may cache derived
 * values (serialisations) in a WeakMap keyed by it.
 */
export interface IpFacts extends IpBase {
  type: IpTypeFlags;
  risk: IpRiskFlags;
  /** Lower-case operator id of a `type.cloud` range, e.g. "aws", "gcp", "azure"; null when not cloud. */
  cloud_provider: string | null;
  /** The operator's region name, e.g. "us-east-1", "europe-west4", "eastus"; null when its feed has none. */
  cloud_region: string | null;
  /** VPN provider, e.g. "Mullvad", when the source names one; null otherwise. */
  vpn_provider: string | null;
  /** Scanning organisation, e.g. "censys", when `risk.scanner` and the source names one. */
  scanner_org: string | null;
  /** The most specific published crawler range covering the address; null when none. */
  crawler: IpCrawler | null;
  /** Derived from the ASN; null when the address has no ASN. */
  company: IpCompany | null;
  /**
   * For each true flag (keyed by flag name, e.g. "cloud", "vpn"), the source that set it; also
   * "crawler" when `crawler` is set. Absent keys mean the flag is false.
   */
  provenance: Readonly<Record<string, IpProvenance>>;
}
