/**
 * Scoring of one beacon hit (an observation). Pure: no I/O, no clocks. The route gathers the
 * inputs (UA parse, bot registry match, IP facts, token check, beacon tells, and an rDNS check
 * when `needsRdns` says so) into a HitInput; this module turns them into score, decision, reasons
 * and the bot fields, then applies the project's bot policy.
 *
 * Score: a logistic scorecard. Start from `SCORE_WEIGHTS.base` (log-odds), add the weight of every
 * signal present, and map the total through the sigmoid 1 / (1 + e^-x). The result is the
 * probability that the hit is a bot or automation, rounded to 4 decimals; the decision is taken
 * from the rounded score with SCORE_THRESHOLDS. A verified crawler scores high (it is certainly a
 * bot); letting it through is the policy's job, not the score's.
 */
import type { BotKind } from "../datasets/bot-registry.js";
import type { ClientTell } from "../datasets/ua-shape.js";
import type { IpFacts } from "../datasets/ip-facts.js";
import { decideWithPolicy, type BotPolicy, type PolicyAction, type PolicyKind } from "./bot-policy.js";

/** The registry bot a UA names, with what the registry knows for verifying it. */
export interface HitBot {
  bot_id: string;
  bot_name: string;
  bot_operator: string | null;
  bot_kind: BotKind;
  /** Crawler range ids (IpFacts.crawler.id) that belong to this bot; empty when none are published. */
  range_ids: string[];
  /** Reverse-DNS host masks (e.g. "*.googlebot.com"); empty when none. */
  rdns_masks: string[];
}

/** Everything known about one hit, gathered by the route. */
export interface HitInput {
  ua: { browser: string | null; os: string | null; device: string | null };
  /** The HTTP User-Agent names automation or an HTTP library (curl, python-requests, HeadlessChrome…). */
  automationUa: boolean;
  /** Registry match of the UA; may be set together with automationUa (e.g. curl). */
  bot: HitBot | null;
  /**
   * The UA names no registered bot and no automation and does not look like a browser: the tell
   * that says why (UaInfo.client, src/datasets/ua-shape.ts). Null for browsers, bots and automation.
   */
  clientUa: ClientTell | null;
  /** Null when the address is not in the dataset or did not parse. */
  ip: IpFacts | null;
  /** A signed handshake token is present, valid, and bound to this project and session. */
  tokenValid: boolean;
  /** Client automation tells from the beacon (STRONG_TELLS, WEAK_TELLS); unknown names are ignored. */
  tells: string[];
  /** navigator.userAgent sent by the script differs from the HTTP header. */
  clientUaMismatch: boolean;
  /** Forward-confirmed reverse DNS matched one of the bot's masks; null = not checked. */
  rdnsVerified: boolean | null;
}

export type Decision = "allow" | "review" | "block";

/** The scored observation (its scored fields, less `action`, which the route adds). */
export interface ScoredHit {
  /** Probability in [0, 1] that the hit is a bot or automation, 4 decimals. */
  score: number;
  decision: Decision;
  /**
   * Reasons, plus `policy:<action>:<rule>` when the policy changed the decision, and
   * `policy_dry_run:<action>:<rule>` when a rule in dry run would have changed it.
   */
  reasons: string[];
  ua: {
    browser: string | null;
    os: string | null;
    device: string | null;
    /** Registry kind, "automation" for an automation visit, "client" for a non-browser client, null for a browser. */
    bot_kind: PolicyKind | null;
    /** Null for browsers, automation visits and clients. */
    bot_name: string | null;
  };
  bot_id: string | null;
  bot_operator: string | null;
  /** true = verified; false = spoofed; null = not a bot, or unverifiable. */
  bot_verified: boolean | null;
  /** The policy rule that matched, or null when the score alone decided. */
  policy: { action: PolicyAction; rule: string } | null;
  /** The rule in dry run that would have decided the hit (before `policy`), or null. */
  dry_run: { action: PolicyAction; rule: string } | null;
}

/** Beacon tells that prove browser automation: any one makes the hit an automation visit. */
export const STRONG_TELLS: ReadonlySet<string> = new Set([
  "webdriver",
  "headless_ua",
  "phantom",
  "selenium",
  "playwright",
  "puppeteer",
  "nightmare",
]);
/**
 * Beacon tells that real browsers also show (privacy settings, VMs); each adds a little. `cdp`
 * (the DevTools protocol's Runtime domain is on) is here, not above: an open DevTools window sets
 * it too, and a site owner testing their own page must not be blocked for it.
 */
export const WEAK_TELLS: ReadonlySet<string> = new Set(["cdp", "no_languages", "no_plugins", "outer_zero", "swiftshader"]);

/**
 * Tells of an inconsistency a real browser cannot show: one layer spoofed (the UA string, the
 * client hints, the screen, a permission), another left as the engine set it; measured against
 * stealth toolkits and genuine browsers in test/browser/stealth.test.ts. Each adds its weight
 * (log-odds) and the reason `tell:<name>`; one alone reaches review, two block. The first seven
 * come from the page (beacon/src/consistency.ts), the next two from the request's headers
 * (src/front/beacon/header-tells.ts), the last from the handshake's age (src/front/beacon/hits.ts). Explained in docs/api.md, "Client tells".
 */
export const CONSISTENCY_TELLS: ReadonlyMap<string, number> = new Map([
  ["uach_mismatch", 3.0],
  ["platform_mismatch", 3.0],
  ["permission_mismatch", 3.0],
  ["webgl_mismatch", 3.0],
  ["viewport_is_screen", 3.0],
  ["no_window_chrome", 3.0],
  ["window_exceeds_screen", 3.0],
  ["ch_ua_mismatch", 3.0],
  // Alone it stays below review: a proxy between browser and service may reorder headers.
  ["header_order", 2.0],
  ["timing_mismatch", 3.0],
]);

/**
 * Scorecard weights in log-odds. Printed in docs/api.md, "Observations and bot policy"; change
 * them together with the tests and that table.
 * With base -3 a clean hit scores 0.047; +1.386 over base crosses 0.8 (block) at a total of 1.386,
 * and a total of -0.2 crosses 0.45 (review).
 */
export const SCORE_WEIGHTS = Object.freeze({
  /** Log-odds of a hit with no signal: a real browser, valid token, residential IP (0.047). */
  base: -3.0,
  /** automation_detected: automation UA or a strong tell. Alone: 0.953, block. */
  automation_detected: 6.0,
  /** ua_bot: the UA header names a registered bot or an automation client. Alone: 0.731, review. */
  ua_bot: 4.0,
  /**
   * ua_client:<tell>: the UA is neither a browser nor a registered bot nor automation (a
   * non-browser client no list names). As a bot claim: alone 0.731, review; with a missing token 0.953, block.
   */
  ua_client: 4.0,
  /** bot:verified: IP or rDNS confirms the bot. With ua_bot: 0.982 (certainly a bot). */
  bot_verified: 3.0,
  /** bot:spoofed:<id>: the claim failed verification. With ua_bot: 0.998, block. */
  bot_spoofed: 5.0,
  /** client_token_missing. Alone: 0.269, allow (blockers and privacy tools drop the handshake). */
  client_token_missing: 2.0,
  /** ip_datacenter (datacenter, hosting or cloud). Alone 0.182; with a missing token 0.622, review. */
  ip_datacenter: 1.5,
  /** ip_vpn. Alone 0.1; with a missing token 0.31; with datacenter and a missing token 0.786, review. */
  ip_vpn: 0.8,
  /** ip_proxy: open proxy, Tor exit or residential proxy. */
  ip_proxy: 1.5,
  /** ip_scanner: a known scanning organisation. */
  ip_scanner: 2.5,
  /** Each distinct weak tell (no reason of its own). */
  weak_tell: 0.6,
  /** At most this many weak tells count (3 × 0.6 = +1.8). */
  weak_tell_max: 3,
  /** navigator.userAgent differs from the HTTP header (no reason of its own). */
  client_ua_mismatch: 1.5,
});

/** Decision thresholds: allow below `review`, review below `block`, block from `block`. */
export const SCORE_THRESHOLDS = Object.freeze({ review: 0.45, block: 0.8 });

/** The tells of a hit that sent none (most): no set to build. */
const NO_TELLS: ReadonlySet<string> = new Set();

const AI_KINDS: ReadonlySet<BotKind> = new Set<BotKind>(["ai_crawler", "ai_search", "ai_assistant"]);

/**
 * Whether the IP (or rDNS) confirms the bot the UA claims.
 *
 * @returns true when the address lies in one of the bot's published ranges or forward-confirmed
 *   rDNS matched; false (spoofed) when the operator publishes ranges and the address is outside
 *   them, or when only rDNS masks exist and the check failed; null when it cannot be told (no
 *   ranges and no masks, masks not checked, or no IP facts: a missing dataset fails open).
 * @example verifyBot(googlebot, factsOfGptbotRange, null) // false
 */
export function verifyBot(bot: HitBot, ip: IpFacts | null, rdnsVerified: boolean | null): boolean | null {
  if (inOwnRange(bot, ip) || rdnsVerified === true) return true;
  if (bot.range_ids.length > 0 && ip !== null) return false;
  if (bot.rdns_masks.length > 0 && rdnsVerified === false) return false;
  return null;
}

/**
 * Whether the caller should run a forward-confirmed rDNS check before scoring: the bot has rDNS
 * masks and its IP ranges have not already verified it.
 */
export function needsRdns(bot: HitBot, ip: IpFacts | null): boolean {
  return bot.rdns_masks.length > 0 && !inOwnRange(bot, ip);
}

/** The decision for a score. */
export function decide(score: number): Decision {
  if (score >= SCORE_THRESHOLDS.block) return "block";
  if (score >= SCORE_THRESHOLDS.review) return "review";
  return "allow";
}

/**
 * Scores one hit and applies the project's bot policy.
 *
 * @param input the hit's signals (see HitInput)
 * @param policy the project's effective policy (resolvePolicy)
 * @returns the observation fields; `decision` is the policy's action where a rule matched
 */
export function scoreHit(input: HitInput, policy: Readonly<BotPolicy>): ScoredHit {
  const { bot } = input;
  const tells: ReadonlySet<string> = input.tells.length === 0 ? NO_TELLS : new Set(input.tells);
  let strong = false;
  let weak = 0;
  for (const t of tells) {
    if (STRONG_TELLS.has(t)) strong = true;
    if (WEAK_TELLS.has(t)) weak++;
  }
  const automation = input.automationUa || strong;
  const verified = bot === null ? null : verifyBot(bot, input.ip, input.rdnsVerified);

  const reasons: string[] = [];
  let logit = SCORE_WEIGHTS.base;
  const fire = (reason: string, weight: number): void => {
    reasons.push(reason);
    logit += weight;
  };

  // A client tell only when nothing names the client (ua.ts sets it so; a strong tell still wins).
  const client = automation || bot !== null ? null : input.clientUa;
  if (automation) fire("automation_detected", SCORE_WEIGHTS.automation_detected);
  if (bot !== null || input.automationUa) fire("ua_bot", SCORE_WEIGHTS.ua_bot);
  if (client !== null) fire(`ua_client:${client}`, SCORE_WEIGHTS.ua_client);
  if (bot !== null) {
    // One AI reason for three registry kinds; ua.bot_kind keeps the finer kind.
    if (AI_KINDS.has(bot.bot_kind)) reasons.push("bot:ai_crawler");
    else if (bot.bot_kind === "search_crawler") reasons.push("bot:search_crawler");
    reasons.push(`bot:id:${bot.bot_id}`);
    if (verified === true) fire("bot:verified", SCORE_WEIGHTS.bot_verified);
    if (verified === false) fire(`bot:spoofed:${bot.bot_id}`, SCORE_WEIGHTS.bot_spoofed);
  }
  if (!input.tokenValid) fire("client_token_missing", SCORE_WEIGHTS.client_token_missing);
  const ip = input.ip;
  if (ip !== null) {
    if (ip.type.datacenter || ip.type.hosting || ip.type.cloud) fire("ip_datacenter", SCORE_WEIGHTS.ip_datacenter);
    if (ip.risk.vpn) fire("ip_vpn", SCORE_WEIGHTS.ip_vpn);
    if (ip.risk.proxy || ip.risk.tor || ip.risk.residential_proxy) fire("ip_proxy", SCORE_WEIGHTS.ip_proxy);
    if (ip.risk.scanner) fire("ip_scanner", SCORE_WEIGHTS.ip_scanner);
  }
  for (const t of tells) {
    const weight = CONSISTENCY_TELLS.get(t); // a Map: tell names come from the client
    if (weight !== undefined) fire(`tell:${t}`, weight);
  }
  logit += Math.min(weak, SCORE_WEIGHTS.weak_tell_max) * SCORE_WEIGHTS.weak_tell;
  if (input.clientUaMismatch) logit += SCORE_WEIGHTS.client_ua_mismatch;

  const score = Math.round(sigmoid(logit) * 10_000) / 10_000;
  const bot_kind: PolicyKind | null = automation ? "automation" : (bot?.bot_kind ?? (client !== null ? "client" : null));
  const bot_id = bot?.bot_id ?? null;
  const byScore = decide(score);
  const { decision, outcome, dry_run } = decideWithPolicy(byScore, policy, { bot_id, bot_kind, bot_verified: verified });
  if (outcome !== null && decision !== byScore) reasons.push(`policy:${decision}:${outcome.rule}`);
  if (dry_run !== null && dry_run.action !== decision) reasons.push(`policy_dry_run:${dry_run.action}:${dry_run.rule}`);

  return {
    score,
    decision,
    reasons,
    ua: {
      browser: input.ua.browser,
      os: input.ua.os,
      device: input.ua.device,
      bot_kind,
      bot_name: automation ? null : (bot?.bot_name ?? null),
    },
    bot_id,
    bot_operator: bot?.bot_operator ?? null,
    bot_verified: verified,
    policy: outcome,
    dry_run,
  };
}

function inOwnRange(bot: HitBot, ip: IpFacts | null): boolean {
  const id = ip?.crawler?.id;
  return id !== undefined && bot.range_ids.includes(id);
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}
