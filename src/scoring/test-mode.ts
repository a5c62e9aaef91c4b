/**
 * Magic inputs of test mode (docs/api.md, "Test mode"): with a test-mode key (fs_test_…), these
 * e-mail domains and IP addresses always give the same decision, so a customer's CI can check how
 * their integration handles a `block` or a `review` without crafting real abuse. Live keys score
 * them like any other input. The addresses are from TEST-NET-3 (RFC 5737), the domains under
 * `.test` (RFC 2606): neither can belong to a real visitor.
 */
import { DECISION_THRESHOLDS, type Decision } from "./check.js";

/** E-mail domains that decide, with a test key. */
export const MAGIC_EMAIL_DOMAINS: Readonly<Record<string, Decision>> = Object.freeze({
  "block.fraudscore.test": "block",
  "review.fraudscore.test": "review",
  "allow.fraudscore.test": "allow",
});

/** IP addresses that decide, with a test key. */
export const MAGIC_IPS: Readonly<Record<string, Decision>> = Object.freeze({
  "203.0.113.66": "block",
  "203.0.113.55": "review",
  "203.0.113.11": "allow",
});

/** Scores a magic decision states: inside its band of DECISION_THRESHOLDS. */
const MAGIC_SCORES: Readonly<Record<Decision, number>> = Object.freeze({ allow: 0.01, review: (DECISION_THRESHOLDS.review + DECISION_THRESHOLDS.block) / 2, block: 0.99 });

/**
 * The decision the magic inputs force, the strictest when several are given; null when none is magic.
 * @example magicDecision("jane@block.fraudscore.test", undefined) // { decision: "block", score: 0.99 }
 */
export function magicDecision(email: string | undefined, ip: string | undefined): { decision: Decision; score: number } | null {
  const at = email === undefined ? -1 : email.lastIndexOf("@");
  const byEmail = at < 0 ? undefined : MAGIC_EMAIL_DOMAINS[email!.slice(at + 1).trim().toLowerCase()];
  const byIp = ip === undefined ? undefined : MAGIC_IPS[ip.trim()];
  const order: Decision[] = ["block", "review", "allow"];
  const decision = order.find((d) => d === byEmail || d === byIp);
  return decision === undefined ? null : { decision, score: MAGIC_SCORES[decision] };
}
