/**
 * Verdicts on an account event (a login or signup) from what the service knows about its browser
 * session, its IP and the accounts that share them. Used by POST /v1/sessions/resolve (after the
 * binding) and POST /v1/auth/check (the pre-flight, before any binding), so both answer the same
 * verdict for the same evidence. Pure: no I/O, no clocks.
 */
import type { IpFacts } from "../datasets/ip-dataset.js";
import { FUSION_WEIGHTS, decide, type Decision } from "./check.js";
import { SCORE_WEIGHTS } from "./observation.js";

/** A session first seen less than this long ago is "fresh" (docs/api.md, "POST /v1/sessions/resolve"). */
export const FRESH_SESSION_MS = 10 * 60_000;

/** Log-odds the correlation adds to the edge verdict (docs/api.md, "POST /v1/sessions/resolve"). */
export const RESOLVE_WEIGHTS = Object.freeze({
  shared_session: 1.5, // another account on this browser session…
  shared_session_each: 0.5, // …and each further one
  shared_fingerprint: 1.0,
  shared_fingerprint_each: 0.3,
  shared_ip: 0.5, // three or more other accounts on one (not shared-network) IP
  many_emails: 1.0, // two or more other emails on this session
  cap: 4.0,
});

/** Where the edge verdict came from: the session's latest beacon hit, the IP's reputation, or nothing. */
export type VerdictSource = "session" | "ip" | "none";

/** The verdict before the correlation: a probability and the reasons behind it. */
export interface EdgeVerdict {
  score: number;
  reasons: string[];
  source: VerdictSource;
}

/** What the correlation counts: distinct other accounts per identifier, other emails on the session. */
export interface CorrelationCounts {
  accounts_sharing_session: number;
  accounts_sharing_fingerprint: number;
  accounts_sharing_ip: number;
  linked_emails: number;
}

export interface Verdict {
  score: number;
  decision: Decision;
  reasons: string[];
}

/** Without a (known) session: the IP's reputation, scored like a beacon hit's IP part. */
export function ipVerdict(facts: IpFacts | null): EdgeVerdict {
  if (!facts) return { score: sigmoid(SCORE_WEIGHTS.base), reasons: [], source: "none" };
  const reasons: string[] = [];
  let x: number = SCORE_WEIGHTS.base;
  if (facts.type.datacenter || facts.type.hosting || facts.type.cloud) {
    reasons.push("ip_datacenter");
    x += SCORE_WEIGHTS.ip_datacenter;
  }
  if (facts.risk.vpn) {
    reasons.push("ip_vpn");
    x += SCORE_WEIGHTS.ip_vpn;
  }
  if (facts.risk.proxy || facts.risk.tor || facts.risk.residential_proxy) {
    reasons.push("ip_proxy");
    x += SCORE_WEIGHTS.ip_proxy;
  }
  if (facts.risk.scanner) {
    reasons.push("ip_scanner");
    x += SCORE_WEIGHTS.ip_scanner;
  }
  return { score: sigmoid(x), reasons, source: "ip" };
}

/**
 * The correlation's log-odds and reasons: multi-account use of one browser, a crowded IP, many
 * emails on one session. The total is capped at RESOLVE_WEIGHTS.cap.
 */
export function correlationEvidence(c: CorrelationCounts, sharedNetwork: boolean): { add: number; reasons: string[] } {
  const W = RESOLVE_WEIGHTS;
  const reasons: string[] = [];
  let add = 0;
  if (c.accounts_sharing_session > 0) {
    add += W.shared_session + W.shared_session_each * (c.accounts_sharing_session - 1);
    reasons.push("multi_account:session");
  }
  if (c.accounts_sharing_fingerprint > 0) {
    add += W.shared_fingerprint + W.shared_fingerprint_each * (c.accounts_sharing_fingerprint - 1);
    reasons.push("multi_account:fingerprint");
  }
  if (!sharedNetwork && c.accounts_sharing_ip >= 3) {
    add += W.shared_ip;
    reasons.push("shared_ip");
  }
  if (c.linked_emails >= 2) {
    add += W.many_emails;
    reasons.push("many_emails");
  }
  return { add: Math.min(W.cap, add), reasons };
}

/** The edge verdict moved by what the correlation says (POST /v1/sessions/resolve's verdict). */
export function verdictOf(edge: { score: number; reasons: string[] }, c: CorrelationCounts, sharedNetwork: boolean): Verdict {
  const corr = correlationEvidence(c, sharedNetwork);
  const score = round(sigmoid(logit(edge.score) + corr.add));
  return { score, decision: decide(score), reasons: [...edge.reasons, ...corr.reasons] };
}

/**
 * Log-odds of the pre-flight's own evidence (POST /v1/auth/check), added after the correlation.
 * The user-agent and e-mail weights are the form check's (FUSION_WEIGHTS in check.ts): the same
 * evidence, the same likelihood ratio. Printed in docs/api.md, "POST /v1/auth/check".
 */
export const PREFLIGHT_WEIGHTS = Object.freeze({
  /** A session id the beacon never issued to this org (or one past retention): a forged or replayed `_fs`. */
  session_unknown: 1.0,
  ua_automation: FUSION_WEIGHTS.ua_automation,
  ua_bot: FUSION_WEIGHTS.ua_bot,
  ua_missing: FUSION_WEIGHTS.ua_missing,
  email_invalid: FUSION_WEIGHTS.email_invalid,
  email_disposable: FUSION_WEIGHTS.email_disposable,
  email_no_mx: FUSION_WEIGHTS.email_no_mx,
  email_typo: FUSION_WEIGHTS.email_typo,
});

/** The pre-flight's evidence besides the edge verdict and the correlation. */
export interface PreflightEvidence {
  /** A session id was given and this org's beacon does not know it. */
  sessionUnknown: boolean;
  /** null without a user agent in the request. */
  ua: { present: boolean; automation: boolean; bot: boolean } | null;
  /** The e-mail analysis's reason codes; null without an e-mail. */
  emailReasons: readonly string[] | null;
}

/**
 * The pre-flight verdict: the edge verdict, moved by the correlation (as a resolve would move it
 * if the account were bound now), then by the request's own evidence (unknown session, user
 * agent, e-mail). Reasons in that order.
 * @example preflightVerdict(ipVerdict(null), zeroCounts, false, { sessionUnknown: false, ua: null, emailReasons: ["disposable_domain"] })
 * // { score: 0.2689..., decision: "allow", reasons: ["email_disposable"] }
 */
export function preflightVerdict(edge: EdgeVerdict, c: CorrelationCounts, sharedNetwork: boolean, e: PreflightEvidence): Verdict {
  const W = PREFLIGHT_WEIGHTS;
  const corr = correlationEvidence(c, sharedNetwork);
  const reasons = [...edge.reasons, ...corr.reasons];
  let add = corr.add;
  const push = (reason: string, w: number): void => {
    reasons.push(reason);
    add += w;
  };
  if (e.sessionUnknown) push("session_unknown", W.session_unknown);
  if (e.ua) {
    if (!e.ua.present) push("ua_missing", W.ua_missing);
    else if (e.ua.automation) push("ua_automation", W.ua_automation);
    else if (e.ua.bot) push("ua_bot", W.ua_bot);
  }
  if (e.emailReasons) {
    const r = new Set(e.emailReasons);
    if (r.has("invalid_syntax")) push("email_invalid", W.email_invalid);
    if (r.has("disposable_domain")) push("email_disposable", W.email_disposable);
    if (r.has("no_mx")) push("email_no_mx", W.email_no_mx);
    if (r.has("possible_typo")) push("email_typo", W.email_typo);
  }
  const score = round(sigmoid(logit(edge.score) + add));
  return { score, decision: decide(score), reasons };
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}
