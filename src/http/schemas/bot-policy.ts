import { z } from "zod";
import { POLICY_KINDS, type BotPolicy, type PolicyKind } from "../../scoring/bot-policy.js";

/** Most bot rules one policy may hold. */
export const MAX_BOT_RULES = 500;

/** Most rules one policy may put in dry run. */
export const MAX_DRY_RUN_RULES = 50;

/** A registry bot id: lowercase, starts with a letter or digit, at most 64 characters. */
const BOT_ID_MESSAGE = "not a bot id: lowercase a-z, 0-9, '.', '_', '-', starting with a letter or digit, at most 64 characters (e.g. gptbot)";
const botId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, BOT_ID_MESSAGE);

const kindRules = Object.fromEntries(
  POLICY_KINDS.map((k) => [k, z.enum(["allow", "block", "score"]).optional()]),
) as Record<PolicyKind, z.ZodOptional<z.ZodEnum<{ allow: "allow"; block: "block"; score: "score" }>>>;

/** A rule's path, as observations name it (`policy.rule`): "spoofed", "bots.<bot_id>" or "kinds.<kind>". */
const RULE_PATH = new RegExp(`^(spoofed|bots\\.[a-z0-9][a-z0-9._-]{0,63}|kinds\\.(${POLICY_KINDS.join("|")}))$`);
const rulePath = z.string().regex(RULE_PATH, 'not a rule: "spoofed", "bots.<bot_id>" or "kinds.<kind>" (e.g. kinds.ai_crawler)');

/**
 * PUT /v1/projects/{projectId}/bot-policy: a project's bot policy; every field optional, merged
 * over the defaults (resolvePolicy). Unknown keys, at any level, are rejected by name.
 */
export const putBotPolicyBody = z.strictObject({
  bots: z
    // The record's own message for a bad key, so the path-prefixed message names the rule (bots.<key>).
    .record(botId, z.enum(["allow", "block"]), { error: (iss) => (iss.code === "invalid_key" ? BOT_ID_MESSAGE : undefined) })
    .refine((b) => Object.keys(b).length <= MAX_BOT_RULES, { message: `at most ${MAX_BOT_RULES} bot rules` })
    .optional(),
  // A strict object rather than a record, so an unknown kind is reported as `kinds: Unrecognized key "x"`.
  kinds: z.strictObject(kindRules).optional(),
  spoofed: z.enum(["block", "score"]).optional(),
  allow_unverified: z.boolean().optional(),
  dry_run: z
    .array(rulePath)
    .max(MAX_DRY_RUN_RULES)
    .optional()
    .describe("Rules in dry run: the decision ignores them, and a hit one would have decided records it (the observation's `dry_run` and reason `policy_dry_run:<action>:<rule>`)."),
}) satisfies z.ZodType<Partial<BotPolicy>>;

export type PutBotPolicyBody = z.infer<typeof putBotPolicyBody>;

/*
 * Response schema of the bot-policy routes: documentation and tests only (GET /openapi.json and
 * the integration tests' contract check), never parsed on the request path.
 */

const action = z.enum(["allow", "block"]);

/** `data` of GET and PUT /v1/projects/{projectId}/bot-policy. */
export const botPolicyResponse = z.object({
  project_id: z.string(),
  policy: z
    .object({
      bots: z.record(z.string(), action),
      kinds: z.partialRecord(z.enum(POLICY_KINDS as [PolicyKind, ...PolicyKind[]]), z.enum(["allow", "block", "score"])),
      spoofed: z.enum(["block", "score"]),
      allow_unverified: z.boolean(),
      dry_run: z.array(z.string()),
    })
    .describe("The effective policy: the stored document merged over the defaults."),
  stored: putBotPolicyBody.nullable().describe("The document as last PUT; null when the project uses the defaults."),
  updated_at: z.iso.datetime().nullable().describe("When the document was last PUT."),
});

/** Most days a replay looks back. */
export const MAX_REPLAY_DAYS = 30;

/** POST /v1/projects/{projectId}/bot-policy/replay: a proposed policy and/or check thresholds. */
export const replayBody = z
  .strictObject({
    policy: putBotPolicyBody.optional().describe("A proposed policy document (as PUT bot-policy takes it): replayed over the project's stored hits."),
    thresholds: z
      .strictObject({
        review: z.number().gt(0).lt(1),
        block: z.number().gt(0).max(1),
      })
      .refine((t) => t.review < t.block, { message: "review must be below block" })
      .optional()
      .describe("Proposed check thresholds (allow below `review`, block from `block`): replayed over the org's stored checks."),
    days: z.number().int().min(1).max(MAX_REPLAY_DAYS).default(7).describe("How many days back to replay (1-30)."),
    examples: z.number().int().min(0).max(20).default(5).describe("Most examples in each group (0-20)."),
  })
  .refine((b) => b.policy !== undefined || b.thresholds !== undefined, { message: "give a policy, thresholds or both" });

export type ReplayBody = z.output<typeof replayBody>;

const decision = z.enum(["allow", "review", "block"]);
const transitions = z.array(z.object({ from: decision, to: decision, count: z.number().int() })).describe("Changes by old and new decision, most frequent first.");

function groupsOf<E extends z.ZodType>(name: string, example: E, what: string) {
  return z.array(z.object({ [name]: z.string(), count: z.number().int(), examples: z.array(example) })).describe(what);
}

const hitExample = z.object({
  id: z.string(),
  created_at: z.iso.datetime(),
  page: z.string().nullable(),
  bot_id: z.string().nullable(),
  bot_kind: z.string().nullable(),
  score: z.number(),
  from: decision,
  to: decision,
  rule: z.string().nullable().describe("The proposed policy's rule that decides the hit; null when its score does."),
});

const checkExample = z.object({
  request_id: z.string(),
  created_at: z.iso.datetime(),
  form_id: z.string(),
  score: z.number(),
  from: decision,
  to: decision,
});

/** The common part of both replays. */
const replayCounts = {
  scanned: z.number().int().describe("Stored items re-decided."),
  changed: z.number().int().describe("Of them, those whose decision would change."),
  partial: z.boolean().describe("The scan stopped at its cap before the start of the period: the figures cover the newest `scanned` items only."),
  transitions,
};

/** `data` of POST /v1/projects/{projectId}/bot-policy/replay. */
export const replayResponse = z.object({
  project_id: z.string(),
  days: z.number().int(),
  since: z.iso.datetime().describe("Start of the replayed period."),
  hits: z
    .object({
      ...replayCounts,
      by_kind: groupsOf("kind", hitExample, "Changes by the hit's kind (`ua.bot_kind`; `browser` for a browser)."),
      by_reason: groupsOf("reason", hitExample, "Changes by what decides under the proposal: a rule's path, or `score`."),
    })
    .nullable()
    .describe("The project's hits re-decided under the proposed policy (null without one)."),
  checks: z
    .object({
      ...replayCounts,
      by_form: groupsOf("form_id", checkExample, "Changes by form."),
    })
    .nullable()
    .describe("The org's stored checks re-decided with the proposed thresholds (null without them)."),
});
