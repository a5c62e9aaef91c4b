import { CONSISTENCY_TELLS, SCORE_WEIGHTS } from "../scoring/observation.js";

/**
 * What each reason of an observation means, in words, with the weight it adds to the score
 * (log-odds, docs/api.md "Observations and bot policy"). Unknown reasons are shown as they are.
 */
export function explainReason(reason: string): string {
  const w = (n: number): string => ` (adds ${n > 0 ? "+" : ""}${n.toFixed(1)} to the log-odds)`;
  if (reason === "automation_detected") return `The browser is automated: an automation client's User-Agent or a strong tell such as navigator.webdriver${w(SCORE_WEIGHTS.automation_detected)}.`;
  if (reason === "ua_bot") return `The User-Agent names a known bot or an automation client${w(SCORE_WEIGHTS.ua_bot)}.`;
  if (reason === "bot:verified") return `The bot's claim was verified: its address is in the operator's published ranges, or reverse DNS confirmed it${w(SCORE_WEIGHTS.bot_verified)}. A verified bot is certainly a bot; the bot policy decides whether to let it in.`;
  if (reason === "bot:search_crawler") return "The bot is a search engine crawler (kind search_crawler). No weight of its own.";
  if (reason === "bot:ai_crawler") return "The bot is an AI crawler, AI search or AI assistant (the finer kind is in ua.bot_kind). No weight of its own.";
  if (reason.startsWith("bot:id:")) return `The bot registry identifies the bot as "${reason.slice(7)}". No weight of its own; bot rules of the policy match this id.`;
  if (reason.startsWith("bot:spoofed:")) return `The User-Agent claims to be "${reason.slice(12)}", but the address is outside that operator's published ranges (or reverse DNS did not confirm it): a spoofed bot${w(SCORE_WEIGHTS.bot_spoofed)}.`;
  if (reason === "client_token_missing") return `No valid handshake token came with the hit: the beacon's handshake did not run, failed, or the token belongs to another session${w(SCORE_WEIGHTS.client_token_missing)}. Script and privacy blockers cause this too.`;
  if (reason === "ip_datacenter") return `The address belongs to a datacenter, hosting or cloud network rather than a home or mobile one${w(SCORE_WEIGHTS.ip_datacenter)}.`;
  if (reason === "ip_vpn") return `The address is a known VPN exit${w(SCORE_WEIGHTS.ip_vpn)}.`;
  if (reason === "ip_proxy") return `The address is an open proxy, a Tor exit or a residential proxy${w(SCORE_WEIGHTS.ip_proxy)}.`;
  if (reason === "ip_scanner") return `The address belongs to a known internet scanner${w(SCORE_WEIGHTS.ip_scanner)}.`;
  if (reason.startsWith("tell:")) {
    const name = reason.slice(5);
    const weight = CONSISTENCY_TELLS.get(name);
    const what = TELLS[name] ?? "A consistency check between the page, the request and the handshake failed.";
    return `Consistency tell ${name}: ${what}${weight === undefined ? "" : w(weight)}.`;
  }
  const policy = /^policy:(allow|block):(.+)$/.exec(reason);
  if (policy) return `The project's bot policy changed the decision to ${policy[1]}: ${ruleName(policy[2]!)} applied (it overrides the score).`;
  const dryRun = /^policy_dry_run:(allow|block):(.+)$/.exec(reason);
  if (dryRun) return `The project's bot policy has ${ruleName(dryRun[2]!)} in dry run: it would have changed the decision to ${dryRun[1]}, and was not applied.`;
  return "No explanation is known for this reason.";
}

/** A policy rule's path ("spoofed", "bots.<id>", "kinds.<kind>") in words. */
export function ruleName(rule: string): string {
  if (rule === "spoofed") return "the rule for spoofed bots";
  if (rule.startsWith("bots.")) return `the rule for the bot "${rule.slice(5)}"`;
  if (rule.startsWith("kinds.")) return `the rule for the bot kind "${rule.slice(6)}"`;
  return `the rule ${rule}`;
}

const TELLS: Record<string, string> = {
  uach_mismatch: "the User-Agent Client Hints disagree with the User-Agent string or with themselves",
  platform_mismatch: "navigator.platform names another operating system than the User-Agent",
  permission_mismatch: "the Notification permission and the Permissions API disagree",
  webgl_mismatch: "the GPU renderer exists only on another operating system than the User-Agent's",
  viewport_is_screen: "the page is exactly the size of the screen in a normal tab, as emulated screens are",
  no_window_chrome: "the window is exactly the page, with no tabs, toolbar or frame",
  window_exceeds_screen: "the window is larger than the screen it is on",
  ch_ua_mismatch: "the Sec-CH-UA request headers disagree with the User-Agent header",
  header_order: "Accept-Language arrived before Accept-Encoding, which Chromium's network stack never does",
  timing_mismatch: "the handshake token is older than the page claims to be",
};
