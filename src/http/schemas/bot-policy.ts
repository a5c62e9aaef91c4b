import { z } from "zod";
import { POLICY_KINDS, type BotPolicy, type PolicyKind } from "../../scoring/bot-policy.js";

/** Most bot rules one policy may hold. */
export const MAX_BOT_RULES = 500;

/** A registry bot id: lowercase, starts with a letter or digit, at most 64 characters. */
const BOT_ID_MESSAGE = "not a bot id: lowercase a-z, 0-9, '.', '_', '-', starting with a letter or digit, at most 64 characters (e.g. gptbot)";
const botId = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, BOT_ID_MESSAGE);

const kindRules = Object.fromEntries(
  POLICY_KINDS.map((k) => [k, z.enum(["allow", "block", "score"]).optional()]),
) as Record<PolicyKind, z.ZodOptional<z.ZodEnum<{ allow: "allow"; block: "block"; score: "score" }>>>;

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
    })
    .describe("The effective policy: the stored document merged over the defaults."),
  stored: putBotPolicyBody.nullable().describe("The document as last PUT; null when the project uses the defaults."),
  updated_at: z.iso.datetime().nullable().describe("When the document was last PUT."),
});
