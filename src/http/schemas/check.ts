import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";
import { bodyIp, bodyIpOf } from "./ip.js";
import { isPlainObject, noUndefinedKeys, onlyKnownKeys, optNumber, optString, withFastPath } from "../validate.js";

/** Most fields in form_data, and most items in one field's list (shared by the schema and its fast path). */
const MAX_FIELDS = 200;
const MAX_ITEMS = 100;

const fieldText = z.string().max(20_000);
const itemText = z.string().max(5_000);
/** A form field value as sites send them: text, numbers, booleans, lists of those. */
const fieldValue = z.union([fieldText, z.number(), z.boolean(), z.null(), z.array(z.union([itemText, z.number(), z.boolean()])).max(MAX_ITEMS)]);
const fieldName = z.string().max(200);

const metadataSchema = z.object({
  email: z.string().max(320).optional(),
  /** Parsed here (schemas/ip.ts, bodyIp): a bad address is one of the body's problems. */
  ip: bodyIp.optional(),
  user_agent: z.string().max(2048).optional(),
  honeypot_field: z.string().max(5_000).optional(),
  /** Epoch milliseconds (values below 1e11 are taken as seconds). */
  form_loaded_at: z.number().min(0).max(1e14).optional(),
  captcha_token: z.string().max(10_000).optional(),
});

/** POST /v1/check. Unknown metadata keys are dropped, not refused. */
const checkSchema = z.strictObject({
  form_id: z.string().min(1).max(200),
  form_data: z
    .record(fieldName, fieldValue)
    .refine((o) => Object.keys(o).length <= MAX_FIELDS, { message: `at most ${MAX_FIELDS} fields` })
    .optional(),
  metadata: metadataSchema.optional(),
});

export const checkBody = withFastPath(checkSchema, checkBodyFast);
/** The fields of POST /v1/check, for requests that send a check again (POST /v1/feedback). */
export const checkShape = checkSchema.shape;
export type CheckBody = z.infer<typeof checkSchema>;
type FieldValue = NonNullable<CheckBody["form_data"]>[string];

const CHECK_KEYS = new Set(Object.keys(checkSchema.shape));
const METADATA_KEYS = Object.keys(metadataSchema.shape);

/**
 * The bounds the fast path checks, read from the schema above so that each rule is written once;
 * only the counts of fields and list items (MAX_FIELDS, MAX_ITEMS), which zod does not expose, are
 * constants shared with it.
 */
const maxOf = (s: z.ZodString): number => s.maxLength!;
const md = metadataSchema.shape;
const FORM_ID = { min: checkSchema.shape.form_id.minLength!, max: maxOf(checkSchema.shape.form_id) };
const FIELD_NAME_MAX = maxOf(fieldName);
const FIELD_TEXT_MAX = maxOf(fieldText);
const ITEM_TEXT_MAX = maxOf(itemText);
const META_MAX = {
  email: maxOf(md.email.unwrap()),
  user_agent: maxOf(md.user_agent.unwrap()),
  honeypot_field: maxOf(md.honeypot_field.unwrap()),
  captcha_token: maxOf(md.captcha_token.unwrap()),
};
const LOADED_AT = { min: md.form_loaded_at.unwrap().minValue!, max: md.form_loaded_at.unwrap().maxValue! };

/**
 * checkBody's fast path (validate.ts, withFastPath): what checkBody.parse returns for a valid
 * body, or undefined when it is not plainly valid (the schema then answers, with its own messages).
 */
function checkBodyFast(v: unknown): CheckBody | undefined {
  if (!isPlainObject(v) || !onlyKnownKeys(v, CHECK_KEYS)) return undefined;
  const { form_id, form_data, metadata } = v;
  if (typeof form_id !== "string" || form_id.length < FORM_ID.min || form_id.length > FORM_ID.max) return undefined;
  const out: CheckBody = { form_id };
  if (form_data !== undefined) {
    const fields = formDataFast(form_data);
    if (fields === undefined) return undefined;
    out.form_data = fields;
  }
  if (metadata !== undefined) {
    if (!isPlainObject(metadata) || !noUndefinedKeys(metadata, METADATA_KEYS)) return undefined;
    const { email, ip, user_agent, honeypot_field, form_loaded_at, captcha_token } = metadata;
    if (!optString(email, META_MAX.email) || !optString(user_agent, META_MAX.user_agent) || !optString(honeypot_field, META_MAX.honeypot_field)) return undefined;
    if (!optNumber(form_loaded_at, LOADED_AT.min, LOADED_AT.max, false) || !optString(captcha_token, META_MAX.captcha_token)) return undefined;
    const m: NonNullable<CheckBody["metadata"]> = {};
    if (email !== undefined) m.email = email as string;
    if (ip !== undefined) {
      const parsed = bodyIpOf(ip);
      if (parsed === undefined) return undefined;
      m.ip = parsed;
    }
    if (user_agent !== undefined) m.user_agent = user_agent as string;
    if (honeypot_field !== undefined) m.honeypot_field = honeypot_field as string;
    if (form_loaded_at !== undefined) m.form_loaded_at = form_loaded_at as number;
    if (captcha_token !== undefined) m.captcha_token = captcha_token as string;
    out.metadata = m;
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
    if (++n > MAX_FIELDS || k.length > FIELD_NAME_MAX || k === "__proto__") return undefined;
    const x = v[k];
    if (typeof x === "string") {
      if (x.length > FIELD_TEXT_MAX) return undefined;
      out[k] = x;
    } else if (typeof x === "number") {
      if (!Number.isFinite(x)) return undefined;
      out[k] = x;
    } else if (typeof x === "boolean" || x === null) out[k] = x;
    else if (Array.isArray(x)) {
      if (x.length > MAX_ITEMS) return undefined;
      for (const e of x) if (!(typeof e === "string" ? e.length <= ITEM_TEXT_MAX : typeof e === "number" ? Number.isFinite(e) : typeof e === "boolean")) return undefined;
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
