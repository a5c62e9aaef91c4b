import { z } from "zod";
import { UNSAFE_TEXT_MESSAGE, isCleanLine } from "../../shared/text.js";
import { bodyIp } from "./ip.js";
import { textLine } from "./text.js";

const id = (max: number) => textLine(max);

/** POST /v1/sessions/resolve. The "at least one of" rule is a 422, checked in the route. */
export const resolveBody = z.strictObject({
  external_user_id: id(256),
  observation_type: z.enum(["auth.signup", "auth.login"]),
  session_id: id(128).optional(),
  /** A string (e.g. the beacon's hash) or a number (docs/api.md, "Decisions where the product left things open"). */
  fingerprint: z.union([id(512), z.number().finite()]).optional(),
  ip: bodyIp.optional(),
  email: z.string().max(320).refine(isCleanLine, UNSAFE_TEXT_MESSAGE).optional(),
});
export type ResolveBody = z.infer<typeof resolveBody>;

const WINDOW = /^([1-9]\d{0,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Longest sliding window: 31 days. */
export const MAX_WINDOW_MS = 31 * 86_400_000;
/** Most units one window may hold (each allowed request is one entry of the window's log). */
export const MAX_LIMIT = 10_000;

/** "30s", "15m", "1h", "1d" -> milliseconds; null when malformed or too long. */
export function windowMs(text: string): number | null {
  const m = WINDOW.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms <= MAX_WINDOW_MS ? ms : null;
}

/** POST /v1/meter (preview). */
export const meterBody = z.strictObject({
  resource: id(200),
  identity: z
    .strictObject({ user_id: id(256).optional(), session: id(128).optional(), ip: bodyIp.optional() })
    .refine((i) => i.user_id !== undefined || i.session !== undefined || i.ip !== undefined, { message: "give at least one of user_id, session, ip" }),
  limit: z.strictObject({
    max: z.number().int().min(1).max(MAX_LIMIT),
    window: z.string().refine((w) => windowMs(w) !== null, { message: "a duration such as 30s, 15m, 1h or 1d, at most 31d" }),
  }),
  /**
   * Credit-budget option: units this request consumes from `limit.max` (default 1). With
   * `cost`, `max` is a budget of units per window (e.g. 1000 credits per day) rather than a
   * request count.
   */
  cost: z.number().int().min(1).max(MAX_LIMIT).optional(),
});
export type MeterBody = z.infer<typeof meterBody>;

/*
 * Response schemas of POST /v1/sessions/resolve and POST /v1/meter: documentation and tests only
 * (GET /openapi.json and the integration tests' contract check), never parsed on the request path.
 */

const count = z.number().int().min(0);

/** The beacon session's continuity, as resolve and the auth pre-flight answer it (continuityOf). */
export const sessionContinuity = z
    .object({
      found: z.boolean(),
      first_seen: z.number().int().describe("Epoch ms; 0 when the session is not known."),
      last_seen: z.number().int(),
      age_seconds: count,
      observation_count: count,
      is_fresh: z.boolean().describe("First seen less than 10 minutes ago."),
    })
    .describe("The beacon session, when session_id names one of this org's sessions.");

/** `data` of POST /v1/sessions/resolve. */
export const resolveResponse = z.object({
  request_id: z.string(),
  bound: z.literal(true),
  verdict: z.object({
    score: z.number().min(0).max(1),
    decision: z.enum(["allow", "review", "block"]),
    reasons: z.array(z.string()),
  }),
  continuity: sessionContinuity,
  correlation: z.object({
    accounts_sharing_session: count,
    accounts_sharing_fingerprint: count,
    accounts_sharing_ip: count,
    linked_emails: count,
    accounts_sharing_prefix: count,
    linked_accounts: count,
    shared_network: z.boolean().describe("The IP is carrier-grade NAT or mobile: shared by many subscribers."),
    known_account: z.boolean().describe("The account was bound before this call (false for its first resolve)."),
  }),
  verdict_source: z.enum(["session", "ip", "none"]),
  processing_time_ms: z.number().min(0),
});

/** `data` of POST /v1/meter. */
export const meterResponse = z.object({
  action: z.enum(["allow", "throttle", "block"]),
  verdict: z.enum(["ok", "over_limit", "multi_account", "multi_account_over_limit"]),
  confidence: z.number().min(0).max(1),
  usage: z.object({
    count: count.describe("Units used in the window, this request included when allowed."),
    limit: z.number().int().min(1),
    window: z.string(),
    remaining: count,
    retry_after_seconds: z.number().int().min(1).nullable().describe("When this request would fit; null when allowed."),
  }),
  linked_identities: count.describe("Linked accounts sharing this budget."),
  budget: z.enum(["account", "session", "ip"]),
});
