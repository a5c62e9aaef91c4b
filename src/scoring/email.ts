/**
 * E-mail address risk (POST /v1/email; `signals.email` of POST /v1/check). Pure: the lists are
 * in-memory lookups (datasets/email-lists.ts) and the MX answer is passed in by the caller, who did
 * the DNS (datasets/mx.ts). No I/O, no clocks.
 *
 * Syntax: a practical subset of RFC 5321/5322 (what real mailbox providers hand out):
 * - the input is trimmed; at most 254 octets in all (RFC 5321 4.5.3.1.3: a 256-octet path less "<>");
 * - exactly one "@"; quoted local parts ("a b"@x), comments and domain literals (user@[192.0.2.1])
 *   are refused: legal, but no provider issues them and form abuse uses them;
 * - local part: 1-64 octets of dot-atom text (RFC 5322 atext), no leading, trailing or doubled
 *   dot; non-ASCII letters, marks and digits are allowed (RFC 6531 SMTPUTF8 addresses);
 * - domain: IDN decision: a Unicode domain is converted to its A-label (punycode) form with
 *   UTS #46 (node:url domainToASCII), and that ASCII form is what is checked, matched against the
 *   lists, queried in DNS and returned as `domain` (`bücher.de` -> `xn--bcher-kva.de`). Then at most
 *   253 octets, at least two labels, each 1-63 of [a-z0-9-] not starting or ending with "-", and a
 *   top-level label of letters (or an `xn--` label): an all-numeric TLD is an IP address in disguise.
 *
 * analyzeEmail is pure; analyzeEmailWithMx / emailCheckSignals add the MX lookup through an injected
 * resolver (EmailServices), for the routes.
 *
 * Score: a logistic scorecard, as in observation.ts: EMAIL_WEIGHTS.base (log-odds) plus the weight
 * of every signal present, through the sigmoid, rounded to 4 decimals; the decision comes from the
 * usual thresholds (allow < 0.45 <= review < 0.8 <= block).
 */
import { domainToASCII } from "node:url";
import type { EmailLists, RoleCategory } from "../datasets/email-lists.js";
import { emailLists } from "../datasets/email-lists.js";
import type { EmailServices, MxOutcome, MxResult } from "../datasets/mx.js";
import type { QueryBudget } from "../datasets/lookup-cache.js";
import { SCORE_THRESHOLDS, type Decision } from "./observation.js";

/** Why an address failed the syntax check (`signals.syntax_error`). */
export type EmailSyntaxError =
  | "empty"
  | "too_long"
  | "missing_at"
  | "multiple_at"
  | "local_empty"
  | "local_too_long"
  | "local_invalid"
  | "domain_empty"
  | "domain_literal"
  | "domain_too_long"
  | "domain_invalid"
  | "domain_single_label"
  | "tld_invalid";

/** A syntactically valid address, split and normalised. */
export interface ParsedEmail {
  /** The local part as given (case kept). */
  local: string;
  /** The domain in ASCII (A-label) form, lower-case. */
  domain: string;
  /** Lower-case local part without the +tag, dots removed for providers that ignore them. */
  normalizedLocal: string;
  /** The domain of the normalised address (googlemail.com becomes gmail.com). */
  normalizedDomain: string;
  /** true when the local part carries a +tag (`jane+news`). */
  plusAddress: boolean;
}

export type ParseEmailResult = { ok: true; value: ParsedEmail } | { ok: false; error: EmailSyntaxError };

/** The `signals.mx` block. */
export interface EmailMxSignal {
  /** true: can receive mail; false: cannot (no MX, NXDOMAIN, null MX); null: not known (unresolved or skipped). */
  found: boolean | null;
  /** "skipped" when no lookup was made (invalid syntax, or the caller passed no MX answer). */
  outcome: MxOutcome | "skipped";
  /** Mail exchangers by preference; [domain] for an implicit MX; [] unless found. */
  hosts: string[];
  /** found through A/AAAA only (RFC 5321 implicit MX). */
  implicit: boolean;
  /** The domain publishes a null MX (RFC 7505). */
  null_mx: boolean;
}

/** `data.signals` of POST /v1/email. */
export interface EmailSignals {
  valid_syntax: boolean;
  /** Null when the syntax is valid. */
  syntax_error: EmailSyntaxError | null;
  disposable: boolean;
  free_provider: boolean;
  role_account: boolean;
  role_category: RoleCategory | null;
  plus_address: boolean;
  /** The corrected address (`jane@gmail.com` for `jane@gmsil.com`), or null. */
  typo_suggestion: string | null;
  mx: EmailMxSignal;
}

/** `data` of POST /v1/email. */
export interface EmailAnalysis {
  /** The address as received, trimmed. */
  email: string;
  /** Lower-case, +tag removed, dots removed where the provider ignores them; null when invalid. */
  normalized: string | null;
  /** ASCII (A-label) domain, lower-case; null when the syntax is invalid. */
  domain: string | null;
  /** Risk probability in [0, 1], 4 decimals. */
  score: number;
  decision: Decision;
  /** Reason codes, most serious first; see EMAIL_WEIGHTS. */
  reasons: EmailReason[];
  signals: EmailSignals;
}

export type EmailReason =
  | "invalid_syntax"
  | "disposable_domain"
  | "no_mx"
  | "mx_unresolved"
  | "implicit_mx"
  | "possible_typo"
  | "role_account"
  | "plus_address"
  | "free_provider";

/**
 * Scorecard weights in log-odds; printed in docs/api.md, "POST /v1/email"; change them together
 * with the tests and that list.
 * With base -2.5 a clean company address scores 0.076; a total of 2.5 above base reaches 0.5, and
 * 3.886 above base crosses 0.8 (block).
 */
export const EMAIL_WEIGHTS = Object.freeze({
  /** Log-odds of a valid address on a company domain with an MX record (0.076). */
  base: -2.5,
  /** invalid_syntax: not an address (0.996, block); nothing else is evaluated. */
  invalid_syntax: 8.0,
  /** disposable_domain: throw-away mailbox service (0.881, block). */
  disposable_domain: 4.5,
  /** no_mx: the domain cannot receive mail: NXDOMAIN, no MX/A/AAAA, or null MX (0.818, block). */
  no_mx: 4.0,
  /** implicit_mx: deliverable only through A/AAAA; typical of parked or made-up domains (0.182). */
  implicit_mx: 1.0,
  /** possible_typo: one or two keystrokes from a major provider (0.5, review: ask the user). */
  possible_typo: 2.5,
  /** role_account: a function mailbox (info@, noreply@), not a person (0.214). */
  role_account: 1.2,
  /** plus_address: a +tag; cheap aliases for repeated sign-ups (0.154). */
  plus_address: 0.8,
  /** free_provider: webmail or consumer ISP; weak alone (0.119). With role and plus: 0.5, review. */
  free_provider: 0.5,
  /** mx_unresolved: DNS timed out or failed; fail open, no weight, reported as a reason. */
  mx_unresolved: 0,
});

/** Decision thresholds (shared with observation scoring): allow < 0.45 <= review < 0.8 <= block. */
export const EMAIL_THRESHOLDS = SCORE_THRESHOLDS;

/** Providers that deliver `j.a.n.e` to `jane`; the normalised address drops the dots. */
const DOT_INSENSITIVE: ReadonlyMap<string, string> = new Map([
  ["gmail.com", "gmail.com"],
  ["googlemail.com", "gmail.com"],
]);

const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const ATEXT_ASCII = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
const ATEXT_UTF8 = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+$/u;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Checks and normalises one address (trimmed first).
 * @example parseEmail("J.Ane+news@GoogleMail.com") // ok; normalizedLocal "jane", normalizedDomain "gmail.com", plusAddress true
 * @example parseEmail("jane@@x.com") // { ok: false, error: "multiple_at" }
 */
export function parseEmail(input: string): ParseEmailResult {
  const address = input.trim();
  if (address.length === 0) return fail("empty");
  const ascii = ASCII.test(address);
  if ((ascii ? address.length : Buffer.byteLength(address)) > MAX_ADDRESS) return fail("too_long");
  const at = address.lastIndexOf("@");
  if (at < 0) return fail("missing_at");
  if (address.indexOf("@") !== at) return fail("multiple_at");
  const local = address.slice(0, at);
  const rawDomain = address.slice(at + 1);
  const localError = checkLocal(local, ascii);
  if (localError) return fail(localError);
  const domain = toAsciiDomain(rawDomain);
  if (typeof domain !== "string") return fail(domain.error);
  let base = local.toLowerCase();
  const plus = base.indexOf("+");
  const plusAddress = plus > 0;
  if (plusAddress) base = base.slice(0, plus);
  const mapped = DOT_INSENSITIVE.get(domain);
  if (mapped !== undefined) base = base.replaceAll(".", "");
  return { ok: true, value: { local, domain, normalizedLocal: base, normalizedDomain: mapped ?? domain, plusAddress } };
}

function fail(error: EmailSyntaxError): ParseEmailResult {
  return { ok: false, error };
}

function checkLocal(local: string, ascii: boolean): EmailSyntaxError | null {
  if (local.length === 0) return "local_empty";
  if ((ascii ? local.length : Buffer.byteLength(local)) > MAX_LOCAL) return "local_too_long";
  // Quoted strings and comments fail here: '"', '(' and ' ' are not atext.
  if (local.startsWith(".") || local.endsWith(".") || local.includes("..")) return "local_invalid";
  for (const atom of local.split(".")) if (!(ascii ? ATEXT_ASCII : ATEXT_UTF8).test(atom)) return "local_invalid";
  return null;
}

/** The checked ASCII form of a domain, or why it is not one. */
function toAsciiDomain(raw: string): string | { error: EmailSyntaxError } {
  if (raw.length === 0) return { error: "domain_empty" };
  if (raw.startsWith("[")) return { error: "domain_literal" };
  let domain: string;
  if (ASCII.test(raw)) domain = raw.toLowerCase();
  else {
    // UTS #46 mapping and punycode; "" when the name cannot be converted (e.g. disallowed code points).
    domain = domainToASCII(raw);
    if (domain.length === 0) return { error: "domain_invalid" };
  }
  if (domain.length > MAX_DOMAIN) return { error: "domain_too_long" };
  const labels = domain.split(".");
  if (labels.length < 2) return { error: "domain_single_label" };
  for (const label of labels) if (!LABEL.test(label)) return { error: "domain_invalid" };
  if (!TLD.test(labels[labels.length - 1]!)) return { error: "tld_invalid" };
  return domain;
}

/**
 * Major providers a typo is checked against, most used first (the first wins a tie). Entries
 * whose first label is 4 characters or less (live, msn, aol, me, mac, gmx, mail, web, qq) are
 * only checked for suffix typos (`aol.cm`): every short name one edit away is someone's real domain.
 */
export const TYPO_TARGETS: readonly string[] = Object.freeze([
  "gmail.com",
  "yahoo.com",
  "hotmail.com",
  "outlook.com",
  "icloud.com",
  "aol.com",
  "live.com",
  "msn.com",
  "googlemail.com",
  "ymail.com",
  "me.com",
  "mac.com",
  "protonmail.com",
  "proton.me",
  "gmx.com",
  "gmx.de",
  "gmx.net",
  "web.de",
  "yandex.ru",
  "mail.ru",
  "comcast.net",
  "hotmail.co.uk",
  "yahoo.co.uk",
  "hotmail.fr",
  "yahoo.fr",
  "orange.fr",
  "qq.com",
]);

/**
 * Domains on the free list that are typo-squats of a major provider, not providers: they still
 * get a suggestion. Every other listed domain is known to be real and never does.
 */
export const LISTED_TYPO_DOMAINS: ReadonlySet<string> = new Set([
  "yaho.com", // yahoo.com; on freemail's free list through one of its merged gists
  "hitmail.com", // hotmail.com
  "comast.net", // comcast.net
]);

interface TypoTarget {
  domain: string;
  name: string;
  suffix: string;
  /** Edits allowed in name + suffix together; 0 = suffix typos only. */
  nameEdits: number;
}

const TARGETS: readonly TypoTarget[] = TYPO_TARGETS.map((domain) => {
  const dot = domain.indexOf(".");
  const name = domain.slice(0, dot);
  return { domain, name, suffix: domain.slice(dot + 1), nameEdits: name.length <= 4 ? 0 : name.length <= 7 ? 1 : 2 };
});
const TARGET_SET: ReadonlySet<string> = new Set(TYPO_TARGETS);

/**
 * The major provider a domain is probably a typo of, or null.
 *
 * Rule: split at the first dot into name and suffix. A target matches when
 * (a) the name equals the target's and the suffix is one edit from the target's (`gmail.co`,
 *     `gmail.con`, `aol.cm`); or
 * (b) the target's name has 5+ characters, the first letters agree, the suffix is at most one edit
 *     away, and name and suffix edits together are at most 1 (names of 5-7 characters: gmail,
 *     yahoo, hotmail, outlook) or 2 (8+: googlemail, protonmail, ...); edits are
 *     Damerau-Levenshtein (optimal string alignment: insert, delete, substitute, swap neighbours).
 * The closest target wins, then the earlier one in TYPO_TARGETS. Never for a target itself, nor
 * for a domain on the free or disposable list (a real domain), except LISTED_TYPO_DOMAINS; a
 * disposable-listed near-miss such as gmai.com is a typo-catcher, so it does get a suggestion.
 * @example suggestDomain("gmial.com", lists) // "gmail.com"
 * @example suggestDomain("email.com", lists) // null: a real provider on the free list
 */
export function suggestDomain(domain: string, lists: EmailLists): string | null {
  // Memoised per domain (real traffic repeats domains; the scan over the targets costs ~2 µs).
  let memo = suggestionMemo.get(lists);
  if (!memo) suggestionMemo.set(lists, (memo = new Map()));
  const known = memo.get(domain);
  if (known !== undefined) return known;
  const found = suggestUncached(domain, lists);
  if (memo.size >= SUGGESTION_MEMO_MAX) memo.clear();
  memo.set(domain, found);
  return found;
}

const suggestionMemo = new WeakMap<EmailLists, Map<string, string | null>>();
const SUGGESTION_MEMO_MAX = 50_000;

function suggestUncached(domain: string, lists: EmailLists): string | null {
  if (TARGET_SET.has(domain)) return null;
  if (lists.isFree(domain) && !LISTED_TYPO_DOMAINS.has(domain)) return null;
  const dot = domain.indexOf(".");
  const name = domain.slice(0, dot);
  const suffix = domain.slice(dot + 1);
  let best: string | null = null;
  let bestDist = Infinity;
  for (const t of TARGETS) {
    const suffixDist = suffix === t.suffix ? 0 : editDistance(suffix, t.suffix, 1);
    if (suffixDist > 1) continue;
    let dist: number;
    if (name === t.name) dist = suffixDist;
    else if (t.nameEdits === 0 || name.charCodeAt(0) !== t.name.charCodeAt(0)) continue;
    else dist = suffixDist + editDistance(name, t.name, t.nameEdits - suffixDist);
    const limit = name === t.name ? 1 : t.nameEdits;
    if (dist >= 1 && dist <= limit && dist < bestDist) {
      best = t.domain;
      bestDist = dist;
    }
  }
  return best;
}

/**
 * Damerau-Levenshtein distance (optimal string alignment) between two short strings, or `max + 1`
 * as soon as it must exceed `max` (a cheap bound for the typo check).
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        v = Math.min(v, prev2[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[n]!, max + 1);
}

const MX_SKIPPED: EmailMxSignal = Object.freeze({ found: null, outcome: "skipped", hosts: [], implicit: false, null_mx: false }) as EmailMxSignal;

/**
 * Scores one address.
 * @param address the address as received (trimmed here).
 * @param mx the MX answer for the address's ASCII domain (`parseEmail(address).value.domain`);
 *   omit it to score without DNS (signals.mx.outcome "skipped", no MX weight).
 * @param lists the classification lists; defaults to the process-wide npm lists.
 * @example analyzeEmail("jane@gmsil.com").reasons // ["possible_typo"]; signals.typo_suggestion "jane@gmail.com"
 */
export function analyzeEmail(address: string, mx?: MxResult, lists: EmailLists = emailLists()): EmailAnalysis {
  const email = address.trim();
  const parsed = parseEmail(email);
  if (!parsed.ok) {
    return {
      email,
      normalized: null,
      domain: null,
      ...scoreOf(["invalid_syntax"]),
      signals: {
        valid_syntax: false,
        syntax_error: parsed.error,
        disposable: false,
        free_provider: false,
        role_account: false,
        role_category: null,
        plus_address: false,
        typo_suggestion: null,
        mx: MX_SKIPPED,
      },
    };
  }
  const p = parsed.value;
  const disposable = lists.isDisposable(p.domain);
  const free = !disposable && lists.isFree(p.domain);
  const role = lists.roleCategory(p.normalizedLocal);
  const typo = suggestDomain(p.domain, lists);
  const mxSignal = mxSignalOf(mx);
  const reasons: EmailReason[] = [];
  if (disposable) reasons.push("disposable_domain");
  if (mxSignal.found === false) reasons.push("no_mx");
  if (mxSignal.outcome === "unresolved") reasons.push("mx_unresolved");
  if (mxSignal.implicit) reasons.push("implicit_mx");
  if (typo !== null) reasons.push("possible_typo");
  if (role !== null) reasons.push("role_account");
  if (p.plusAddress) reasons.push("plus_address");
  if (free) reasons.push("free_provider");
  return {
    email,
    normalized: `${p.normalizedLocal}@${p.normalizedDomain}`,
    domain: p.domain,
    ...scoreOf(reasons),
    signals: {
      valid_syntax: true,
      syntax_error: null,
      disposable,
      free_provider: free,
      role_account: role !== null,
      role_category: role,
      plus_address: p.plusAddress,
      typo_suggestion: typo === null ? null : `${p.local}@${typo}`,
      mx: mxSignal,
    },
  };
}

function mxSignalOf(mx: MxResult | undefined): EmailMxSignal {
  if (mx === undefined) return MX_SKIPPED;
  return {
    found: mx.outcome === "found" ? true : mx.outcome === "none" ? false : null,
    outcome: mx.outcome,
    hosts: mx.outcome === "found" ? mx.hosts : [],
    implicit: mx.outcome === "found" && mx.implicit,
    null_mx: mx.nullMx,
  };
}

/** Sum of weights through the sigmoid, rounded to 4 decimals, and the decision from that. */
function scoreOf(reasons: EmailReason[]): { score: number; decision: Decision; reasons: EmailReason[] } {
  let x = EMAIL_WEIGHTS.base;
  for (const r of reasons) x += EMAIL_WEIGHTS[r];
  const score = Math.round((1 / (1 + Math.exp(-x))) * 10_000) / 10_000;
  const decision: Decision = score >= EMAIL_THRESHOLDS.block ? "block" : score >= EMAIL_THRESHOLDS.review ? "review" : "allow";
  return { score, decision, reasons };
}

/** `signals.email` of POST /v1/check, plus the reasons for the check's explanation. */
export interface CheckEmailSignals {
  /** The address's risk score, 0-1. */
  risk: number;
  disposable: boolean;
  /** ASCII domain, lower-case; "" when the address has no valid domain. */
  domain: string;
  /** The analysis's reason codes (not part of the answer's `signals.email`; for rule_matches and logs). */
  reasons: EmailReason[];
}

/**
 * The `signals.email` block of POST /v1/check from an analysis.
 * @example toCheckEmailSignals(analyzeEmail("jane@example.com", mx)) // { risk: 0.0759, disposable: false, domain: "example.com", reasons: [] }
 */
export function toCheckEmailSignals(a: EmailAnalysis): CheckEmailSignals {
  return { risk: a.score, disposable: a.signals.disposable, domain: a.domain ?? "", reasons: a.reasons };
}

/** An analysis and whether its MX answer cost a DNS query. */
export interface EmailAnalysisWithMx {
  analysis: EmailAnalysis;
  /**
   * "miss": DNS was queried; "hit": answered from the MX cache (or a lookup in flight); "skipped": no
   * lookup (invalid syntax); "test_budget": not cached and not looked up, the test-mode DNS budget spent.
   */
  mxCache: "hit" | "miss" | "skipped" | "test_budget";
}

/**
 * Parses the address, looks up its domain's MX through the injected resolver (only when the
 * syntax is valid), then scores it. The only I/O is the resolver's, which never rejects for DNS
 * trouble (a timeout gives outcome "unresolved", reason mx_unresolved, scored fail-open).
 * `budget`: a test-mode key's DNS budget (front/test-mode-budget.ts); spent, the domain is answered
 * from the cache only (unresolved when not cached).
 * @example const { analysis } = await analyzeEmailWithMx(deps.email, "jane@example.com");
 */
export async function analyzeEmailWithMx(services: EmailServices, address: string, budget?: QueryBudget, lists: EmailLists = emailLists()): Promise<EmailAnalysisWithMx> {
  const parsed = parseEmail(address);
  if (!parsed.ok) return { analysis: analyzeEmail(address, undefined, lists), mxCache: "skipped" };
  const mx = await services.mx.lookup(parsed.value.domain, budget);
  return { analysis: analyzeEmail(address, mx, lists), mxCache: mx.cache };
}

/**
 * `signals.email` of POST /v1/check for an address, MX included (see analyzeEmailWithMx).
 * @example const email = await emailCheckSignals(deps.email, body.metadata.email); // { risk, disposable, domain, reasons }
 */
export async function emailCheckSignals(services: EmailServices, address: string): Promise<CheckEmailSignals> {
  return toCheckEmailSignals((await analyzeEmailWithMx(services, address)).analysis);
}
