/**
 * What the service did for its users, counted on the request path as plain numbers (a prom-client
 * counter hashes its labels on every inc) and read by GET /metrics (metrics.ts): credits charged
 * per route and plan, quota refusals per plan, and the decisions of checks per route. One set per
 * front thread; GET /metrics sums the threads.
 */

/** Route label (`METHOD /pattern`) -> plan -> credits charged. */
export const creditsCharged = new Map<string, Map<string, number>>();
/** Plan -> calls refused with 429 QUOTA_EXCEEDED. */
export const quotaRefusals = new Map<string, number>();
/** Route label -> decision (allow, review, block) -> checks answered. */
export const checkDecisions = new Map<string, Map<string, number>>();

function add(outer: Map<string, Map<string, number>>, a: string, b: string, n: number): void {
  let inner = outer.get(a);
  if (!inner) outer.set(a, (inner = new Map()));
  inner.set(b, (inner.get(b) ?? 0) + n);
}

/** A charge written to the journal (its answer is going out). */
export function countCredits(route: string | undefined, plan: string | undefined, credits: number): void {
  add(creditsCharged, route ?? "unmatched", plan ?? "unknown", credits);
}

/** A call refused for its org's quota. */
export function countQuotaRefusal(plan: string): void {
  quotaRefusals.set(plan, (quotaRefusals.get(plan) ?? 0) + 1);
}

/** A check's decision, as answered. */
export function countDecision(route: string, decision: string): void {
  add(checkDecisions, route, decision, 1);
}
