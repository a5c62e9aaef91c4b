/**
 * Deep analysis (POST /v1/check/deep): the evidence too slow for the form check, and how it moves
 * the check's score. Each finding adds a fixed log-likelihood ratio to the check's log-odds, as the
 * check's own signals do (check.ts); the weights are priors set from what each finding means, not
 * fit on labelled data. Pure: the route did the DNS, the store reads and the model runs.
 */
import type { ObservationRecord, SessionRecord } from "../store/records.js";
import { decide, type CheckResult, type Decision, type RuleMatch } from "./check.js";
import { STRONG_TELLS } from "./observation.js";

/** Log-odds per deep finding. Printed in docs/api.md, "POST /v1/check/deep". */
export const DEEP_WEIGHTS = Object.freeze({
  /** The address's PTR name does not resolve back to it: a reverse zone set to impersonate, or neglected. */
  rdns_not_confirmed: 0.7,
  /** The confirmed name reads like a server's (compute, vps, cloud…) though the IP datasets did not flag hosting. */
  rdns_server_name: 0.8,
  /** The e-mail domain has no MX record and takes mail only on its A/AAAA address: parked or made-up domains. */
  email_implicit_mx: 0.6,
  /** A strong automation tell in any of the session's hits (the check sees only the forwarded field). */
  session_automation: 3.0,
  /** The session's hits came with two or more browsers or systems: a copied session cookie. */
  session_ua_changed: 1.0,
  /** Three or more addresses, or two or more countries, within one session. */
  session_ip_hopping: 0.8,
  /** Two or more accounts already bound to the session. */
  session_multi_account: 1.0,
  /** × (logit(worst hit's score) − logit(0.05)), within [min, max]: the session's worst hit, not only its latest. */
  session_worst_scale: 0.8,
  session_worst_min: -0.5,
  session_worst_max: 4.0,
  /** × (logit(strongest field) − logit(whole text)) when one field alone reads spammier than the joined text. */
  content_field_scale: 0.5,
});

/** Where a block stands: resolved, or skipped with the reason. */
export type BlockStatus = "resolved" | "skipped";

/** How a host name reads: a server's, a consumer access line's, or neither. */
export type NameKind = "server" | "access" | "other";

/*
 * Name patterns, matched on whole labels or label parts split at "." and "-", digits allowed
 * after the word ("vps12", "pool-73-15"). Server words: provider and product names that only
 * hosting uses. Access words: how ISPs name subscriber lines.
 */
const SERVER_NAME = /(?:^|[.-])(?:ec2|compute|cloud|cloudapp|vps|vds|server|srv|hosting|hosted|dedicated|colo|kvm|vm|instance|droplet|linode|your-server|contaboserver|static\.\d+\.\d+\.\d+\.\d+\.clients)\d*(?=[.-]|$)/i;
const ACCESS_NAME = /(?:^|[.-])(?:dsl|adsl|vdsl|xdsl|cable|dyn|dynamic|dhcp|pool|ppp|pppoe|dialup|dial|broadband|fiber|fibre|ftth|fttx|customer|cust|res|residential|home|mobile|wireless|lte|cpe)\d*(?=[.-]|$)/i;

/**
 * How a host name reads.
 * @example nameKind("ec2-35-180-1-1.eu-west-3.compute.amazonaws.com") // "server"
 * @example nameKind("c-73-15-20-30.hsd1.ca.comcast.net") // "other"
 * @example nameKind("pool-73-15-20-30.nycmny.fios.verizon.net") // "access"
 */
export function nameKind(hostname: string): NameKind {
  if (SERVER_NAME.test(hostname)) return "server";
  if (ACCESS_NAME.test(hostname)) return "access";
  return "other";
}

/** What forward-confirmed reverse DNS found for the address (resolved lookups only). */
export interface NetworkFinding {
  hostname: string | null;
  verified: boolean | null;
  /** The IP datasets already flag the address as datacenter, hosting or cloud. */
  datasetsFlagHosting: boolean;
}

/** The session's history as the store has it, summed up (see summarizeSession). */
export interface SessionSummary {
  first_seen: number;
  last_seen: number;
  age_seconds: number;
  observation_count: number;
  /** Hits read for this summary (the newest first); fewer than observation_count when `complete` is false. */
  examined: number;
  complete: boolean;
  kinds: { page_view: number; form_submit: number };
  decisions: { allow: number; review: number; block: number };
  latest_score: number;
  worst_score: number;
  /** Reasons of the hits read, with how many hits had each; most frequent first, at most 20. */
  reasons: Array<{ reason: string; count: number }>;
  /** Client tells seen in any hit, sorted. */
  tells: string[];
  distinct_ips: number;
  countries: string[];
  /** Distinct browser and OS families (versions ignored: a browser update is not a new browser). */
  distinct_user_agents: number;
  distinct_fingerprints: number;
  /** Hits without a valid handshake token. */
  token_invalid: number;
  bot_ids: string[];
  /** Accounts bound to this session by POST /v1/sessions/resolve. */
  accounts_bound: number;
}

/**
 * Sums up a session's hits (newest first; `observations` may be fewer than the session holds).
 * @param complete whether `observations` is the whole history the store keeps.
 */
export function summarizeSession(session: SessionRecord, observations: readonly ObservationRecord[], complete: boolean, accountsBound: number, nowMs: number): SessionSummary {
  const kinds = { page_view: 0, form_submit: 0 };
  const decisions = { allow: 0, review: 0, block: 0 };
  const reasons = new Map<string, number>();
  const tells = new Set<string>();
  const ips = new Set<string>();
  const countries = new Set<string>();
  const uas = new Set<string>();
  const fingerprints = new Set<string>();
  const bots = new Set<string>();
  let worst = session.last.score;
  let tokenInvalid = 0;
  for (const o of observations) {
    if (o.kind === "form.submit") kinds.form_submit++;
    else kinds.page_view++;
    decisions[o.decision]++;
    for (const r of o.reasons) reasons.set(r, (reasons.get(r) ?? 0) + 1);
    for (const t of o.tells) tells.add(t);
    if (o.ip !== null) ips.add(o.ip);
    if (o.country !== null) countries.add(o.country);
    uas.add(`${family(o.ua.browser)}|${family(o.ua.os)}`);
    if (o.fingerprint !== null) fingerprints.add(o.fingerprint);
    if (o.bot_id !== null) bots.add(o.bot_id);
    if (!o.token_valid) tokenInvalid++;
    if (o.score > worst) worst = o.score;
  }
  return {
    first_seen: session.first_seen,
    last_seen: session.last_seen,
    age_seconds: Math.max(0, Math.round((nowMs - session.first_seen) / 1000)),
    observation_count: session.observation_count,
    examined: observations.length,
    complete,
    kinds,
    decisions,
    latest_score: session.last.score,
    worst_score: worst,
    reasons: [...reasons]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 20)
      .map(([reason, count]) => ({ reason, count })),
    tells: [...tells].sort(),
    distinct_ips: ips.size,
    countries: [...countries].sort(),
    distinct_user_agents: uas.size,
    distinct_fingerprints: fingerprints.size,
    token_invalid: tokenInvalid,
    bot_ids: [...bots].sort(),
    accounts_bound: accountsBound,
  };
}

/** "Chrome 131" -> "Chrome", "Mac OS 10.15.7" -> "Mac OS"; null stays "?". */
function family(label: string | null): string {
  return label === null ? "?" : label.replace(/(?:\s+[\d._]+)+$/, "");
}

/** One text field's strongest model result (over the windows the classifier reads of it). */
export interface FieldResult {
  field: string;
  spam_probability: number;
}

/** The deep evidence the route gathered; null where a block was skipped. */
export interface DeepFindings {
  network: NetworkFinding | null;
  /** The e-mail analysis's reason codes (MX answered). */
  emailReasons: readonly string[] | null;
  session: SessionSummary | null;
  content: { wholeText: number | null; strongest: FieldResult | null } | null;
}

/** The check's answer, moved by the deep findings. */
export interface DeepResult {
  score: number;
  confidence: number;
  decision: Decision;
  categories: CheckResult["categories"];
  /** The check's rule matches and the deep ones, largest contribution first. */
  rule_matches: DeepRuleMatch[];
}

/** A rule match of the check, or of a deep finding (signal `network` or `session` besides the check's groups). */
export interface DeepRuleMatch extends Omit<RuleMatch, "signal"> {
  signal: RuleMatch["signal"] | "network" | "session";
}

/**
 * The deep contributions, then the fused result: score = sigmoid(logit(check score) + Σ deep
 * contributions). `confidence` rises by 0.1 for each block that resolved besides the e-mail
 * (the check already counted the address), at most 1.
 */
export function fuseDeep(check: CheckResult, f: DeepFindings): DeepResult {
  const W = DEEP_WEIGHTS;
  const deep: DeepRuleMatch[] = [];
  const add = (rule: string, signal: DeepRuleMatch["signal"], contribution: number, detail?: string): void => {
    if (contribution === 0) return;
    const c = round(contribution, 3);
    deep.push(detail === undefined ? { rule, signal, contribution: c } : { rule, signal, contribution: c, detail });
  };
  const matched = new Set(check.rule_matches.map((m) => m.rule));

  if (f.network && f.network.hostname !== null) {
    if (f.network.verified === false) add("rdns_not_confirmed", "network", W.rdns_not_confirmed, f.network.hostname);
    else if (f.network.verified && !f.network.datasetsFlagHosting && nameKind(f.network.hostname) === "server") add("rdns_server_name", "network", W.rdns_server_name, f.network.hostname);
  }
  if (f.emailReasons?.includes("implicit_mx")) add("email_implicit_mx", "email", W.email_implicit_mx);
  if (f.session) {
    const s = f.session;
    const automation = s.tells.some((t) => STRONG_TELLS.has(t)) || s.reasons.some((r) => r.reason === "automation_detected");
    if (automation && !matched.has("beacon_automation")) add("session_automation", "session", W.session_automation);
    if (s.distinct_user_agents >= 2) add("session_ua_changed", "session", W.session_ua_changed, `${s.distinct_user_agents} browsers`);
    if (s.distinct_ips >= 3 || s.countries.length >= 2) add("session_ip_hopping", "session", W.session_ip_hopping, `${s.distinct_ips} addresses, ${s.countries.length} ${s.countries.length === 1 ? "country" : "countries"}`);
    if (s.accounts_bound >= 2) add("session_multi_account", "session", W.session_multi_account, `${s.accounts_bound} accounts`);
    // The worst hit, less what the check already took from the latest (its beacon_session_verdict).
    const worst = Math.max(W.session_worst_min, Math.min(W.session_worst_max, W.session_worst_scale * (logit(s.worst_score) - logit(0.05))));
    const already = check.rule_matches.find((m) => m.rule === "beacon_session_verdict")?.contribution;
    const extra = already === undefined ? worst : Math.max(0, worst - already);
    add("session_worst_verdict", "session", extra, `worst of ${s.examined} hits ${round(s.worst_score, 4)}`);
  }
  if (f.content && f.content.strongest && f.content.wholeText !== null && f.content.strongest.spam_probability > f.content.wholeText) {
    const lift = W.content_field_scale * (logit(f.content.strongest.spam_probability) - logit(f.content.wholeText));
    add("content_strongest_field", "content", lift, `${f.content.strongest.field}: spam_probability ${round(f.content.strongest.spam_probability, 4)}`);
  }

  const total = deep.reduce((s, m) => s + m.contribution, 0);
  const score = round(sigmoid(logit(check.score) + total), 4);
  const resolved = [f.network, f.session, f.content].filter((b) => b !== null).length;
  return {
    score,
    confidence: round(Math.min(1, check.confidence + 0.1 * resolved), 3),
    decision: decide(score),
    categories: { ...check.categories, spam: score },
    rule_matches: [...check.rule_matches, ...deep].sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution)),
  };
}

function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function round(x: number, d: number): number {
  return Math.round(x * 10 ** d) / 10 ** d;
}
