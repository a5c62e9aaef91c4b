/**
 * Fusion for POST /v1/check: one calibrated probability that a form submission is abuse, built
 * from the content model's calibrated probability and the other signals' likelihood ratios.
 *
 * score = sigmoid(logit(BASE_RATE) + Σ contributions), where
 * - the content model contributes logit(spam_probability) - logit(BASE_RATE) when the form has
 *   text (its probability is calibrated on held-out text, see docs/content-model.md), and
 * - every other signal adds a fixed log-likelihood ratio (FUSION_WEIGHTS), as in naive Bayes.
 * The weights are priors chosen from what each signal means, not fit on labelled form
 * submissions (no public set exists); each one that moved the score is listed in rule_matches.
 * Pure: no I/O, no clock (the caller passes the times).
 */

export type Decision = "allow" | "review" | "block";

/** Share of abusive submissions assumed before any evidence (a form without text starts here). */
export const BASE_RATE = 0.1;

/** Log-likelihood ratios (log-odds added) per signal. Printed in docs/api.md, "POST /v1/check". */
export const FUSION_WEIGHTS = Object.freeze({
  honeypot_filled: 6.0,
  submit_too_fast: 3.0, // under 1.5 s from form load to submit
  submit_fast: 1.2, // under 4 s
  form_stale: 0.7, // loaded more than 24 h before submit
  form_loaded_in_future: 1.5, // more than a minute ahead of the server clock: forged
  ua_automation: 3.0, // curl, python-requests, HeadlessChrome…
  ua_bot: 2.0, // a crawler's UA posting a form
  ua_client: 2.5, // a non-browser client no list names (scalaj-http, lua-resty-http …); detail: the tell
  ua_missing: 0.5,
  email_invalid: 2.5,
  email_disposable: 2.0,
  email_no_mx: 1.5,
  email_typo: 0.4,
  email_role: 0.3,
  ip_scanner: 2.0,
  ip_proxy: 1.5, // open proxy, Tor exit, residential proxy
  ip_datacenter: 1.2,
  ip_vpn: 0.8,
  ip_contribution_cap: 3.0,
  challenge_valid: -1.5,
  challenge_invalid: 2.0,
  challenge_replayed: 2.5,
  beacon_automation: 4.0, // a strong automation tell in the forwarded beacon signals
  beacon_token_invalid: 1.0, // _fs_signals present but its token missing, forged or expired
  beacon_verdict_scale: 0.8, // × (logit(session verdict) - logit(0.05)), clamped below
  beacon_verdict_min: -0.5,
  beacon_verdict_max: 4.0,
});

/** Fraud prior for a form without text. */
export const FRAUD_BASE_RATE = 0.02;

/** A check's decision thresholds: allow below `review`, review below `block`, block from `block`. */
export interface DecisionThresholds {
  review: number;
  block: number;
}

export const DECISION_THRESHOLDS: Readonly<DecisionThresholds> = Object.freeze({ review: 0.45, block: 0.8 });

/** What the route gathered; every part optional (absent = not provided). */
export interface CheckInput {
  content: { spam_probability: number; fraud: number; cold_email: number; chars: number } | null;
  email: { reasons: readonly string[] } | null;
  ip: { datacenter: boolean; vpn: boolean; proxy: boolean; scanner: boolean } | null;
  honeypotFilled: boolean | null;
  /** Milliseconds from form load to this check; null without form_loaded_at. */
  elapsedMs: number | null;
  /** `client`: the tell of a non-browser client no list names (UaInfo.client), null for browsers, bots and automation. */
  ua: { present: boolean; automation: boolean; bot: boolean; client: string | null } | null;
  challenge: { valid: boolean; reason: string | null } | null;
  beacon: { tokenValid: boolean; strongTells: boolean; verdictScore: number | null } | null;
}

/** One signal that moved the score: its contribution in log-odds (positive = riskier). */
export interface RuleMatch {
  rule: string;
  signal: "content" | "email" | "ip" | "behaviour" | "user_agent" | "challenge" | "beacon";
  contribution: number;
  detail?: string;
}

export interface CheckResult {
  score: number;
  confidence: number;
  decision: Decision;
  categories: { spam: number; fraud: number; cold_email: number };
  rule_matches: RuleMatch[];
}

const logit = (p: number): number => {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
};
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const round = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;

/**
 * A check's decision for its score; `thresholds` other than the service's only to replay stored
 * checks under proposed ones (POST /v1/projects/{projectId}/bot-policy/replay).
 */
export function decide(score: number, thresholds: Readonly<DecisionThresholds> = DECISION_THRESHOLDS): Decision {
  return score >= thresholds.block ? "block" : score >= thresholds.review ? "review" : "allow";
}

/**
 * Confidence: how much of the evidence the score could use, 0-1. Text counts in proportion to its
 * length up to 200 characters (0.35), an email address 0.2, an IP 0.2, a valid beacon token 0.15,
 * behaviour (honeypot, timing or a challenge) 0.1. A score from a five-word message alone is a
 * calibrated probability with low confidence; the same score with every signal is firmer.
 */
export function confidenceOf(input: CheckInput): number {
  let c = 0;
  if (input.content) c += 0.35 * Math.min(1, input.content.chars / 200);
  if (input.email) c += 0.2;
  if (input.ip) c += 0.2;
  if (input.beacon?.tokenValid) c += 0.15;
  if (input.honeypotFilled !== null || input.elapsedMs !== null || input.challenge) c += 0.1;
  return round(Math.min(1, c), 3);
}

/** E-mail reasons that move the score: reason, rule, weight (in rule_matches order). */
const EMAIL_RULES: ReadonlyArray<readonly [string, string, number]> = [
  ["invalid_syntax", "email_invalid", FUSION_WEIGHTS.email_invalid],
  ["disposable_domain", "email_disposable", FUSION_WEIGHTS.email_disposable],
  ["no_mx", "email_no_mx", FUSION_WEIGHTS.email_no_mx],
  ["possible_typo", "email_typo", FUSION_WEIGHTS.email_typo],
  ["role_account", "email_role", FUSION_WEIGHTS.email_role],
];

/** IP flags that move the score: flag, rule, weight, strongest first (the IP's total is capped). */
const IP_RULES: ReadonlyArray<readonly [keyof NonNullable<CheckInput["ip"]>, string, number]> = [
  ["scanner", "ip_scanner", FUSION_WEIGHTS.ip_scanner],
  ["proxy", "ip_proxy", FUSION_WEIGHTS.ip_proxy],
  ["datacenter", "ip_datacenter", FUSION_WEIGHTS.ip_datacenter],
  ["vpn", "ip_vpn", FUSION_WEIGHTS.ip_vpn],
];

/**
 * Fuses the signals into the check result (all but `signals`, which the route adds). `orgModel`:
 * the version of the org's own model that gave the content probability (0: the global model).
 */
export function fuseCheck(input: CheckInput, orgModel = 0): CheckResult {
  const W = FUSION_WEIGHTS;
  const matches: RuleMatch[] = [];
  const add = (rule: string, signal: RuleMatch["signal"], contribution: number, detail?: string): void => {
    if (contribution !== 0) matches.push(detail === undefined ? { rule, signal, contribution: round(contribution, 3) } : { rule, signal, contribution: round(contribution, 3), detail });
  };

  if (input.content) {
    const by = orgModel > 0 ? ` (org model v${orgModel})` : "";
    add("content_model", "content", logit(input.content.spam_probability) - logit(BASE_RATE), `spam_probability ${round(input.content.spam_probability)}${by}`);
  }
  if (input.honeypotFilled) add("honeypot_filled", "behaviour", W.honeypot_filled);
  if (input.elapsedMs !== null) {
    const s = input.elapsedMs / 1000;
    if (input.elapsedMs < -60_000) add("form_loaded_in_future", "behaviour", W.form_loaded_in_future);
    else if (input.elapsedMs < 1500) add("submit_too_fast", "behaviour", W.submit_too_fast, `${round(Math.max(0, s), 2)} s after load`);
    else if (input.elapsedMs < 4000) add("submit_fast", "behaviour", W.submit_fast, `${round(s, 2)} s after load`);
    else if (input.elapsedMs > 86_400_000) add("form_stale", "behaviour", W.form_stale, `${Math.round(s / 3600)} h after load`);
  }
  if (input.ua) {
    if (!input.ua.present) add("ua_missing", "user_agent", W.ua_missing);
    else if (input.ua.automation) add("ua_automation", "user_agent", W.ua_automation);
    else if (input.ua.bot) add("ua_bot", "user_agent", W.ua_bot);
    else if (input.ua.client !== null) add("ua_client", "user_agent", W.ua_client, input.ua.client);
  }
  let emailContribution = 0;
  if (input.email) {
    const reasons = input.email.reasons;
    for (const [reason, rule, w] of EMAIL_RULES) {
      if (!reasons.includes(reason)) continue;
      add(rule, "email", w);
      emailContribution += w;
    }
  }
  let ipContribution = 0;
  if (input.ip) {
    for (const [flag, rule, w] of IP_RULES) {
      if (!input.ip[flag]) continue;
      // Flags overlap (a VPN exit in a datacenter): the IP's total is capped.
      const take = Math.min(w, W.ip_contribution_cap - ipContribution);
      if (take <= 0) break;
      add(rule, "ip", take);
      ipContribution += take;
    }
  }
  if (input.challenge) {
    const c = input.challenge;
    if (c.valid) add("challenge_valid", "challenge", W.challenge_valid);
    else if (c.reason === "already_used") add("challenge_replayed", "challenge", W.challenge_replayed);
    else add("challenge_invalid", "challenge", W.challenge_invalid, c.reason ?? undefined);
  }
  if (input.beacon) {
    const b = input.beacon;
    if (b.strongTells) add("beacon_automation", "beacon", W.beacon_automation);
    if (!b.tokenValid) add("beacon_token_invalid", "beacon", W.beacon_token_invalid);
    else if (b.verdictScore !== null) {
      const v = W.beacon_verdict_scale * (logit(b.verdictScore) - logit(0.05));
      add("beacon_session_verdict", "beacon", Math.max(W.beacon_verdict_min, Math.min(W.beacon_verdict_max, v)), `session score ${round(b.verdictScore)}`);
    }
  }

  const total = matches.reduce((s, m) => s + m.contribution, 0);
  const score = round(sigmoid(logit(BASE_RATE) + total));
  // Fraud: the content's scam cues, moved half as far by the email and IP evidence (a throw-away
  // address behind a proxy makes a payment or credential story likelier to be a scam).
  const fraudPrior = input.content ? input.content.fraud : FRAUD_BASE_RATE;
  const fraud = sigmoid(logit(fraudPrior) + 0.5 * (emailContribution + ipContribution));
  return {
    score,
    confidence: confidenceOf(input),
    decision: decide(score),
    categories: {
      // The fused abuse probability: a submission is spam in this sense whatever gave it away.
      spam: score,
      fraud: round(fraud),
      cold_email: round(input.content ? input.content.cold_email : 0),
    },
    rule_matches: matches.sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution)),
  };
}
