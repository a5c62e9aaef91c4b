/**
 * Per-project bot policy: which identified bots (by id or by kind) a project lets through or
 * blocks, whatever their score. Pure: no I/O, no clocks. The stored document is validated at the
 * edge (src/http/schemas/bot-policy.ts); this module only merges and applies it.
 *
 * Order of rules (first that applies wins):
 * 1. `spoofed`: a bot whose UA claim failed verification (`bot_verified === false`) is blocked
 *    when `spoofed` is "block".
 * 2. `bots[bot_id]`: "block" always applies; "allow" applies unless the bot is spoofed.
 * 3. `kinds[kind]` (the observation's `ua.bot_kind`, so "automation" for automation visits):
 *    "block" always applies; "allow" applies to verified bots (`bot_verified === true`), or to
 *    unverifiable ones (`null`) when `allow_unverified` is true; "score" leaves the score's decision.
 * A rule that does not apply falls through to the next. A spoofed bot is never allowed.
 * A rule named in `dry_run` is watched, not enforced: the live decision passes over it, and the
 * first such rule that would have applied is returned as `dry_run` (PolicyVerdict).
 */
import type { BotKind } from "../datasets/bot-registry.js";

/** Every BotKind, in registry order (a runtime list; bot-registry.ts exports only the type). */
export const BOT_KINDS = Object.freeze([
  "search_crawler",
  "ai_crawler",
  "ai_search",
  "ai_assistant",
  "monitor",
  "preview",
  "seo",
  "feed",
  "archive",
  "scraper",
  "tool",
  "other",
] as const satisfies readonly BotKind[]);

// Fails to compile when BotKind gains a member that BOT_KINDS lacks.
const kindsAreExhaustive: [BotKind] extends [(typeof BOT_KINDS)[number]] ? true : never = true;
void kindsAreExhaustive;

/**
 * A kind a policy can name: a registry BotKind, "automation" (webdriver, headless, the HTTP
 * libraries the automation pattern names), or "client" (a non-browser client that no list names:
 * neither a browser nor a registered bot, see src/datasets/ua-shape.ts).
 */
export type PolicyKind = BotKind | "automation" | "client";
/** Every PolicyKind: the BotKinds, then "automation" and "client". */
export const POLICY_KINDS: readonly PolicyKind[] = Object.freeze([...BOT_KINDS, "automation", "client"]);

/** What a rule does: let the hit through, block it, or ("score", kinds only) leave the score's decision. */
export type PolicyAction = "allow" | "block";

/** One project's bot policy (the document of `PUT /v1/projects/{projectId}/bot-policy`). */
export interface BotPolicy {
  /** Rules for one bot, keyed by registry `bot_id` (e.g. "gptbot"). */
  bots: Record<string, PolicyAction>;
  /** Rules for a kind; a kind left out is "score". */
  kinds: Partial<Record<PolicyKind, PolicyAction | "score">>;
  /** What to do with a bot whose UA claim failed verification. */
  spoofed: "block" | "score";
  /** Let "allow" kind rules apply to bots that cannot be verified (`bot_verified === null`). */
  allow_unverified: boolean;
  /**
   * Rules in dry run, by their path (PolicyOutcome.rule: "spoofed", "bots.<bot_id>",
   * "kinds.<kind>"): the live decision ignores them; a hit one would have decided records it.
   */
  dry_run: string[];
}

/** What a policy decided for one hit: the action, and the rule as a path into the document. */
export interface PolicyOutcome {
  action: PolicyAction;
  /** "spoofed", "bots.<bot_id>" or "kinds.<kind>". */
  rule: string;
}

/** The bot facts of one hit a policy looks at (fields of the scored observation). */
export interface PolicySubject {
  bot_id: string | null;
  /** `ua.bot_kind`: null for a browser, "automation" for an automation visit, "client" for a non-browser client. */
  bot_kind: PolicyKind | null;
  bot_verified: boolean | null;
}

/**
 * The policy of a project that has not set one: verified search crawlers are allowed, spoofed
 * bots blocked; AI crawlers (training, search and assistant), monitors, previews, automation and
 * non-browser clients are scored like any other hit, since letting them through is each site's choice.
 */
export const DEFAULT_BOT_POLICY: Readonly<BotPolicy> = deepFreeze({
  bots: {},
  kinds: {
    search_crawler: "allow",
    ai_crawler: "score",
    ai_search: "score",
    ai_assistant: "score",
    monitor: "score",
    preview: "score",
    automation: "score",
    client: "score",
  },
  spoofed: "block",
  allow_unverified: false,
  dry_run: [],
});

/**
 * The effective policy: a project's stored (partial) policy merged over DEFAULT_BOT_POLICY.
 * `bots` and `kinds` merge key by key (a stored key wins); scalars replace the default.
 *
 * @param stored the validated stored document, or null when the project has none
 * @returns a frozen, complete policy
 * @example resolvePolicy({ kinds: { ai_crawler: "block" } }).kinds.search_crawler // "allow"
 */
export function resolvePolicy(stored: Partial<BotPolicy> | null): Readonly<BotPolicy> {
  if (stored === null) return DEFAULT_BOT_POLICY;
  return deepFreeze({
    bots: { ...DEFAULT_BOT_POLICY.bots, ...stored.bots },
    kinds: { ...DEFAULT_BOT_POLICY.kinds, ...stored.kinds },
    spoofed: stored.spoofed ?? DEFAULT_BOT_POLICY.spoofed,
    allow_unverified: stored.allow_unverified ?? DEFAULT_BOT_POLICY.allow_unverified,
    dry_run: stored.dry_run ? [...stored.dry_run] : DEFAULT_BOT_POLICY.dry_run,
  });
}

/** What a policy says about one hit: the rule that decides it, and the dry-run rule that would have. */
export interface PolicyVerdict {
  /** The first live rule that applies, or null when the score decides. */
  outcome: PolicyOutcome | null;
  /** The first rule in dry run that applies before `outcome` (what it would have done), or null. */
  dry_run: PolicyOutcome | null;
}

/** A hit's decision under a policy, from the decision of its score alone (see decideWithPolicy). */
export interface PolicyDecision<D extends string> extends PolicyVerdict {
  decision: D | PolicyAction;
}

const NO_VERDICT: PolicyVerdict = Object.freeze({ outcome: null, dry_run: null });

/**
 * The policy's live decision for one hit, or null when no rule applies (the score decides).
 * Hits that are neither a bot nor automation (`bot_id` and `bot_kind` null) never match.
 */
export function applyPolicy(policy: Readonly<BotPolicy>, hit: PolicySubject): PolicyOutcome | null {
  return evaluatePolicy(policy, hit).outcome;
}

/**
 * The policy's rules for one hit, in order: the first live rule that applies, and the first
 * dry-run rule that applies before it.
 */
export function evaluatePolicy(policy: Readonly<BotPolicy>, hit: PolicySubject): PolicyVerdict {
  let dryRun: PolicyOutcome | null = null;
  const spoofed = hit.bot_verified === false;
  if (spoofed && policy.spoofed === "block") {
    const o: PolicyOutcome = { action: "block", rule: "spoofed" };
    if (!isDryRun(policy, o.rule)) return { outcome: o, dry_run: null };
    dryRun = o;
  }

  // Own-property lookups only: a bot id such as "constructor" must not find Object.prototype members.
  if (hit.bot_id !== null && Object.hasOwn(policy.bots, hit.bot_id)) {
    const action = policy.bots[hit.bot_id]!;
    if (action === "block" || !spoofed) {
      const o: PolicyOutcome = { action, rule: `bots.${hit.bot_id}` };
      if (!isDryRun(policy, o.rule)) return { outcome: o, dry_run: dryRun };
      dryRun ??= o;
    }
  }

  if (hit.bot_kind !== null && Object.hasOwn(policy.kinds, hit.bot_kind)) {
    const action = policy.kinds[hit.bot_kind];
    if (action === "block" || (action === "allow" && (hit.bot_verified === true || (hit.bot_verified === null && policy.allow_unverified)))) {
      const o: PolicyOutcome = { action, rule: `kinds.${hit.bot_kind}` };
      if (!isDryRun(policy, o.rule)) return { outcome: o, dry_run: dryRun };
      dryRun ??= o;
    }
  }
  return dryRun === null ? NO_VERDICT : { outcome: null, dry_run: dryRun };
}

/**
 * A hit's decision: its score's decision, unless a live rule of the policy decides. The one
 * place that combines the two, for the live path (scoreHit) and the replay of stored hits.
 *
 * @param scoreDecision the decision of the hit's score alone (decide(score))
 * @example decideWithPolicy("review", resolvePolicy({ kinds: { ai_crawler: "block" } }), gptbot).decision // "block"
 */
export function decideWithPolicy<D extends string>(scoreDecision: D, policy: Readonly<BotPolicy>, hit: PolicySubject): PolicyDecision<D> {
  const v = evaluatePolicy(policy, hit);
  return { decision: v.outcome?.action ?? scoreDecision, outcome: v.outcome, dry_run: v.dry_run };
}

/** Whether a rule (by path) is in dry run; the list is short (MAX_DRY_RUN_RULES) and read only when a rule applies. */
function isDryRun(policy: Readonly<BotPolicy>, rule: string): boolean {
  return policy.dry_run.length > 0 && policy.dry_run.includes(rule);
}

function deepFreeze<T extends BotPolicy>(p: T): Readonly<T> {
  Object.freeze(p.bots);
  Object.freeze(p.kinds);
  Object.freeze(p.dry_run);
  return Object.freeze(p);
}
