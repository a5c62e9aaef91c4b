/**
 * Classifies an autonomous system from the evidence the builder has about it: whether a hosting,
 * datacenter or VPN ASN list names it, and its organisation name. Pure functions; the builder
 * (scripts/data-build.ts) runs them once per ASN and stores the answer, so nothing here runs per
 * lookup.
 *
 * Rules, first match wins:
 *  1. On a hosting/datacenter ASN list: category "hosting", confidence "high"; hosting.
 *  2. On a VPN ASN list: category "hosting", "high"; hosting (VPN providers' networks are server
 *     networks, not eyeball networks).
 *  2b. On the mobile carrier ASN list (data/mobile-carrier-asns.json): "mobile", "high"; isp and
 *     mobile (for carriers whose registered AS name does not say mobile).
 *  3. Name patterns, confidence "medium":
 *     government (ministry, department of, DoD, police, parliament, ...) -> "government";
 *     education (university, college, school, academic, NREN names) -> "education";
 *     hosting (hosting, host, data center, server, VPS, colocation, dedicated, cloud) -> "hosting", hosting;
 *     mobile carriers (mobile, mobility, wireless, cellular, móvil, GSM, LTE, and a few carrier
 *       brands such as docomo, Jio, Airtel, Safaricom, MTN, Vodacom) -> "mobile", isp and mobile;
 *     access providers (telecom/telekom, telecommunications, communications, telephone, broadband,
 *       cable, fibre, DSL, internet service provider, and well-known carrier brands such as AT&T,
 *       Verizon, Orange, Rostelecom, Chinanet, Vodafone) -> "isp", isp.
 *  4. Anything else: "business", confidence "low"; no flags.
 * A name pattern is evidence, not proof: "medium" says so. isp and mobile are never set when the
 * ASN is classified as hosting.
 */
import type { CompanyCategory } from "./ip-facts.js";

/** What the builder knows about one ASN. */
export interface AsnEvidence {
  /** AS organisation name as published, or null when unnamed. */
  name: string | null;
  /** Named by a hosting or datacenter ASN list (manifest kinds hosting-asn, datacenter-asn). */
  hostingListed: boolean;
  /** Named by a VPN ASN list (manifest kind vpn-asn). */
  vpnListed: boolean;
  /** Named by data/mobile-carrier-asns.json (a carrier's documented mobile network). */
  mobileListed?: boolean;
}

/** The classification of one ASN. `hosting`, `isp`, `mobile` feed the type flags. */
export interface AsnClass {
  category: CompanyCategory;
  confidence: "high" | "medium" | "low";
  /** Datacenter/hosting network. */
  hosting: boolean;
  /** How `hosting` was decided: a list, the name, or not at all. */
  hostingBy: "list" | "name" | null;
  /** Access network (fixed or mobile). */
  isp: boolean;
  /** Mobile carrier. */
  mobile: boolean;
}

const GOVERNMENT =
  /\b(government|govt|ministry|ministerio|minist[eè]re|ministerium|bundesministerium|bundesamt|department of|dept\.? of|state of|city of|county of|county council|municipal\w*|prefecture|gobierno|gouvernement|governo|police|army|navy|air force|armed forces|dod|parliament|senate|egovnet|e-government|usaisc)\b/i;
const EDUCATION =
  /\b(universit\w*|universidad\w*|universidade|universit[äé]\w*|univ|college|school|schule|academ(y|ic|ia)|polytechni\w*|politecnico|hochschule|institute of technology|education\w*|research network|forschungsnetz\w*|jisc|surf b\.v|renater|internet2|cernet|kennisnet)\b/i;
const HOSTING =
  /\b(hosting|webhosting|host|hoster|hosters|hostinger|data ?cent(er|re)s?|rechenzentrum|servers?|vps|vds|colo|colocation|dedicated|cloud)\b/i;
const MOBILE =
  /\b(mobile|mobility|wireless|cellular|celular|cellco|selular|m[oó]vil(es)?|gsm|lte|telcel|mobinil|mobilink|mobitel|mobifone|docomo|jio|airtel|safaricom|mtn|vodacom|digicel)\b/i;
const ISP =
  /\b(tele[ck]om\w*|telecomunica\w*|telecommunica\w*|telekomunik\w*|telekommunikation\w*|telco|telephone|telefon\w*|communications?|comunica[cç]\w*|broadband|bredband\w*|breitband\w*|banda (ancha|larga)|cable|cablevision|kabel\w*|fib(er|re)|dsl|adsl|isp|internet service|internet provider|at&t|verizon|comcast|charter|centurylink|lumen|frontier|windstream|mediacom|altice|optimum|suddenlink|rogers|bell canada|telus|videotron|virgin media|sky uk|orange|sfr|free sas|proximus|kpn|swisscom|telia|telenor|tele2|elisa|rostelecom|megafon|beeline|chinanet|china unicom|kddi|softbank|biglobe|so-net|jcom|lg powercomm|lg dacom|hinet|pldt|viettel|vnpt|telstra|optus|tpg|iinet|vodafone|claro|wind tre|fastweb|iliad|bharat sanchar|etisalat|ttnet|superonline|telmex|totalplay|megacable|ziggo|telenet|liberty global|unitymedia|netcologne|m-net|plusnet)\b/i;

/**
 * Classifies an organisation name alone (rule 3 and 4 above).
 * @example classifyAsnName("T-Mobile USA, Inc.") // { category: "mobile", confidence: "medium" }
 * @example classifyAsnName("Ford Motor Company") // { category: "business", confidence: "low" }
 */
export function classifyAsnName(name: string | null): { category: CompanyCategory; confidence: "medium" | "low" } {
  if (name) {
    for (const [pattern, category] of NAME_RULES) if (pattern.test(name)) return { category, confidence: "medium" };
  }
  return { category: "business", confidence: "low" };
}

const NAME_RULES: ReadonlyArray<readonly [RegExp, CompanyCategory]> = [
  [GOVERNMENT, "government"],
  [EDUCATION, "education"],
  [HOSTING, "hosting"],
  [MOBILE, "mobile"],
  [ISP, "isp"],
];

/**
 * Classifies an ASN from lists first, then its name (rules 1-4 above).
 * @example classifyAsn({ name: "Comcast Cable Communications, LLC", hostingListed: false, vpnListed: false })
 *   // { category: "isp", confidence: "medium", hosting: false, hostingBy: null, isp: true, mobile: false }
 */
export function classifyAsn(evidence: AsnEvidence): AsnClass {
  if (evidence.hostingListed || evidence.vpnListed) {
    return { category: "hosting", confidence: "high", hosting: true, hostingBy: "list", isp: false, mobile: false };
  }
  if (evidence.mobileListed) {
    return { category: "mobile", confidence: "high", hosting: false, hostingBy: null, isp: true, mobile: true };
  }
  const { category, confidence } = classifyAsnName(evidence.name);
  return {
    category,
    confidence,
    hosting: category === "hosting",
    hostingBy: category === "hosting" ? "name" : null,
    isp: category === "isp" || category === "mobile",
    mobile: category === "mobile",
  };
}
