import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";
import { isPlainObject, noUndefinedKeys, onlyKnownKeys, optNumber, optString, withFastPath } from "../validate.js";

/** A form field value as sites send them: text, numbers, booleans, lists of those. */
const fieldValue = z.union([z.string().max(20_000), z.number(), z.boolean(), z.null(), z.array(z.union([z.string().max(5_000), z.number(), z.boolean()])).max(100)]);

/** POST /v1/check. Unknown metadata keys are dropped, not refused. */
const checkSchema = z.strictObject({
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

export const checkBody = withFastPath(checkSchema, checkBodyFast);
/** The fields of POST /v1/check, for requests that send a check again (POST /v1/feedback). */
export const checkShape = checkSchema.shape;
export type CheckBody = z.infer<typeof checkSchema>;
type FieldValue = NonNullable<CheckBody["form_data"]>[string];

const CHECK_KEYS = new Set(Object.keys(checkSchema.shape));
const METADATA_KEYS = ["email", "ip", "user_agent", "honeypot_field", "form_loaded_at", "captcha_token"];

/**
 * checkBody's fast path (validate.ts, withFastPath): what checkBody.parse returns for a valid
 * body, or undefined when it is not plainly valid (the schema then answers, with its own messages).
 */
function checkBodyFast(v: unknown): CheckBody | undefined {
  if (!isPlainObject(v) || !onlyKnownKeys(v, CHECK_KEYS)) return undefined;
  const { form_id, form_data, metadata } = v;
  if (typeof form_id !== "string" || form_id.length < 1 || form_id.length > 200) return undefined;
  const out: CheckBody = { form_id };
  if (form_data !== undefined) {
    const fields = formDataFast(form_data);
    if (fields === undefined) return undefined;
    out.form_data = fields;
  }
  if (metadata !== undefined) {
    if (!isPlainObject(metadata) || !noUndefinedKeys(metadata, METADATA_KEYS)) return undefined;
    const { email, ip, user_agent, honeypot_field, form_loaded_at, captcha_token } = metadata;
    if (!optString(email, 320) || !optString(ip, 64) || !optString(user_agent, 2048) || !optString(honeypot_field, 5_000)) return undefined;
    if (!optNumber(form_loaded_at, 0, 1e14, false) || !optString(captcha_token, 10_000)) return undefined;
    const md: NonNullable<CheckBody["metadata"]> = {};
    if (email !== undefined) md.email = email as string;
    if (ip !== undefined) md.ip = ip as string;
    if (user_agent !== undefined) md.user_agent = user_agent as string;
    if (honeypot_field !== undefined) md.honeypot_field = honeypot_field as string;
    if (form_loaded_at !== undefined) md.form_loaded_at = form_loaded_at as number;
    if (captcha_token !== undefined) md.captcha_token = captcha_token as string;
    out.metadata = md;
  }
  return out;
}

/**
 * form_data as the record schema returns it (a new object, same keys in the same order, lists
 * copied), or undefined. Declines a `__proto__` key, which zod's record does not copy as a field.
 */
function formDataFast(v: unknown): NonNullable<CheckBody["form_data"]> | undefined {
  if (!isPlainObject(v)) return undefined;
  const out: Record<string, FieldValue> = {};
  let n = 0;
  for (const k in v) {
    if (++n > 200 || k.length > 200 || k === "__proto__") return undefined;
    const x = v[k];
    if (typeof x === "string") {
      if (x.length > 20_000) return undefined;
      out[k] = x;
    } else if (typeof x === "number") {
      if (!Number.isFinite(x)) return undefined;
      out[k] = x;
    } else if (typeof x === "boolean" || x === null) out[k] = x;
    else if (Array.isArray(x)) {
      if (x.length > 100) return undefined;
      for (const e of x) if (!(typeof e === "string" ? e.length <= 5_000 : typeof e === "number" ? Number.isFinite(e) : typeof e === "boolean")) return undefined;
      out[k] = x.slice() as FieldValue;
    } else return undefined;
  }
  return out;
}

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
