import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";

/** A form field value as sites send them: text, numbers, booleans, lists of those. */
const fieldValue = z.union([z.string().max(20_000), z.number(), z.boolean(), z.null(), z.array(z.union([z.string().max(5_000), z.number(), z.boolean()])).max(100)]);

/** POST /v1/check. Unknown metadata keys are dropped, not refused. */
export const checkBody = z.strictObject({
  form_id: z.string().min(1).max(200),
  form_data: z
    .record(z.string().max(200), fieldValue)
    .refine((o) => Object.keys(o).length <= 200, { message: "at most 200 fields" })
    .optional(),
  metadata: z
    .object({
      email: z.string().max(320).optional(),
      ip: z.string().max(64).optional(),
      user_agent: z.string().max(2048).optional(),
      honeypot_field: z.string().max(5_000).optional(),
      /** Epoch milliseconds (values below 1e11 are taken as seconds). */
      form_loaded_at: z.number().min(0).max(1e14).optional(),
      captcha_token: z.string().max(10_000).optional(),
    })
    .optional(),
});

export type CheckBody = z.infer<typeof checkBody>;

/*
 * Response schema of POST /v1/check: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const probability = z.number().min(0).max(1);

/** `data` of POST /v1/check (scoring/check.ts; docs/api.md). */
export const checkResponse = z.object({
  score: probability.describe("Calibrated probability that the submission is abuse."),
  confidence: probability.describe("How much of the evidence the score could use."),
  decision: z.enum(["allow", "review", "block"]),
  categories: z.object({ spam: probability, fraud: probability, cold_email: probability }),
  signals: z.object({
    ip: z
      .object({ risk: probability, country_code: z.string().nullable(), is_vpn: z.boolean(), is_datacenter: z.boolean() })
      .nullable()
      .describe("null without metadata.ip."),
    email: z.object({ risk: probability, disposable: z.boolean(), domain: z.string() }).nullable().describe("null without metadata.email."),
    content: z
      .object({
        risk: probability,
        spam_probability: probability,
        language: z.string().nullable(),
        flags: z.array(z.enum(FLAGS)),
        fields: z.array(z.string()).describe("The form fields whose text was scored."),
      })
      .nullable()
      .describe("null when the form has no text."),
  }),
  rule_matches: z
    .array(
      z.object({
        rule: z.string(),
        signal: z.enum(["content", "email", "ip", "behaviour", "user_agent", "challenge", "beacon"]),
        contribution: z.number().describe("Log-odds added to the score (negative: less risky)."),
        detail: z.string().optional(),
      }),
    )
    .describe("Every signal that moved the score, largest contribution first."),
  fusion: z.object({ method: z.string(), model_version: z.string() }),
});
