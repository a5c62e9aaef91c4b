import { z } from "zod";
import { NOT_A_CURSOR, pageLimit } from "./params.js";
import { POLICY_KINDS, type PolicyKind } from "../../scoring/bot-policy.js";
import { UNSAFE_TEXT_MESSAGE, isCleanLine } from "../../shared/text.js";
import { isPlainObject, noUndefinedKeys, optNumber, optString, withFastPath } from "../validate.js";

/**
 * Beacon request bodies. Objects are not strict: a newer beacon may send fields an older service
 * does not know, and those are dropped, while every known field is checked.
 */

/** POST /v1/handshake */
export const handshakeBody = z.object({
  /** The `_fs` cookie's id; a malformed one is replaced by a new id, not refused. */
  session_id: z.string().max(64).optional().describe("The session to continue (the `_fs` cookie)."),
  /** The last token issued for that session: the proof that lets the handshake continue it. */
  token: z.string().max(200).optional().describe("The last token issued for `session_id`, expired or not; without it a new session is started."),
});

/** A tell's name and the fingerprint's form, and the most tells a hit sends (shared by the schema and its fast path). */
const TELL = /^[a-z0-9_]{1,40}$/;
const FP = /^[0-9a-f]{8,64}$/;
const MAX_TELLS = 32;

const timing = z.object({
  elapsed_ms: z.number().min(0).max(1e10).optional(),
  interactions: z.number().int().min(0).max(1e9).optional(),
  rtt_ms: z.number().min(0).max(600_000).optional(),
});
const signals = z.object({
  tells: z.array(z.string().regex(TELL, "tell names are [a-z0-9_]{1,40}")).max(MAX_TELLS).optional(),
  fp: z.string().regex(FP, "a hex hash of 8-64 characters").optional(),
  timing: timing.optional(),
  ua: z.string().max(1024).optional(),
});

/** POST /v1/collect and POST /v1/report: one hit. */
const hitSchema = z.object({
  kind: z.enum(["page.view", "form.submit"]).optional(),
  action: z.string().min(1).max(64).refine(isCleanLine, UNSAFE_TEXT_MESSAGE).optional(),
  token: z.string().max(200).optional(),
  session_id: z.string().max(64).optional(),
  page: z.string().max(2048).optional(),
  signals: signals.optional(),
});
export const hitBody = withFastPath(hitSchema, hitBodyFast);

const HIT_KEYS = Object.keys(hitSchema.shape);
const SIGNAL_KEYS = Object.keys(signals.shape);
const TIMING_KEYS = Object.keys(timing.shape);

/** The bounds the fast path checks, read from the schemas above so that each rule is written once. */
const hit = hitSchema.shape;
const ACTION = { min: hit.action.unwrap().minLength!, max: hit.action.unwrap().maxLength! };
const TOKEN_MAX = hit.token.unwrap().maxLength!;
const SESSION_MAX = hit.session_id.unwrap().maxLength!;
const PAGE_MAX = hit.page.unwrap().maxLength!;
const UA_MAX = signals.shape.ua.unwrap().maxLength!;
const rangeOf = (n: z.ZodOptional<z.ZodNumber>) => ({ min: n.unwrap().minValue!, max: n.unwrap().maxValue!, int: n.unwrap().isInt });
const ELAPSED = rangeOf(timing.shape.elapsed_ms);
const INTERACTIONS = rangeOf(timing.shape.interactions);
const RTT = rangeOf(timing.shape.rtt_ms);

/**
 * hitBody's fast path (validate.ts, withFastPath): what hitBody.parse returns for a valid hit, or
 * undefined when the hit is not plainly valid (the schema then answers, with its own messages).
 */
function hitBodyFast(v: unknown): HitBody | undefined {
  if (!isPlainObject(v) || !noUndefinedKeys(v, HIT_KEYS)) return undefined;
  const { kind, action, token, session_id, page, signals: sig } = v;
  if (kind !== undefined && kind !== "page.view" && kind !== "form.submit") return undefined;
  if (action !== undefined && !(typeof action === "string" && action.length >= ACTION.min && action.length <= ACTION.max && isCleanLine(action))) return undefined;
  if (!optString(token, TOKEN_MAX) || !optString(session_id, SESSION_MAX) || !optString(page, PAGE_MAX)) return undefined;
  const out: HitBody = {};
  if (kind !== undefined) out.kind = kind;
  if (action !== undefined) out.action = action as string;
  if (token !== undefined) out.token = token as string;
  if (session_id !== undefined) out.session_id = session_id as string;
  if (page !== undefined) out.page = page as string;
  if (sig !== undefined) {
    if (!isPlainObject(sig) || !noUndefinedKeys(sig, SIGNAL_KEYS)) return undefined;
    const { tells, fp, timing, ua } = sig;
    const s: NonNullable<HitBody["signals"]> = {};
    if (tells !== undefined) {
      if (!Array.isArray(tells) || tells.length > MAX_TELLS) return undefined;
      for (const t of tells) if (typeof t !== "string" || !TELL.test(t)) return undefined;
      s.tells = tells.slice() as string[];
    }
    if (fp !== undefined) {
      if (typeof fp !== "string" || !FP.test(fp)) return undefined;
      s.fp = fp;
    }
    if (timing !== undefined) {
      if (!isPlainObject(timing) || !noUndefinedKeys(timing, TIMING_KEYS)) return undefined;
      const { elapsed_ms, interactions, rtt_ms } = timing;
      if (!optNumber(elapsed_ms, ELAPSED.min, ELAPSED.max, ELAPSED.int) || !optNumber(interactions, INTERACTIONS.min, INTERACTIONS.max, INTERACTIONS.int) || !optNumber(rtt_ms, RTT.min, RTT.max, RTT.int)) return undefined;
      const t: NonNullable<NonNullable<HitBody["signals"]>["timing"]> = {};
      if (elapsed_ms !== undefined) t.elapsed_ms = elapsed_ms as number;
      if (interactions !== undefined) t.interactions = interactions as number;
      if (rtt_ms !== undefined) t.rtt_ms = rtt_ms as number;
      s.timing = t;
    }
    if (ua !== undefined) {
      if (!optString(ua, UA_MAX)) return undefined;
      s.ua = ua as string;
    }
    out.signals = s;
  }
  return out;
}

export type HitBody = z.infer<typeof hitSchema>;

/*
 * Response schemas of the beacon and observation routes: documentation and tests only (GET
 * /openapi.json and the integration tests' contract check), never parsed on the request path.
 */

const sessionId = z.string().regex(/^s_[0-9A-Za-z]{22}$/).describe("Beacon session id (the `_fs` cookie).");

/** `data` of POST /v1/handshake. */
export const handshakeResponse = z.object({
  token: z.string().describe("Signed token for this project and session; send it with later hits."),
  session_id: sessionId,
  expires_at: z.number().int().describe("Epoch ms when the token expires."),
});

/** `data` of GET /v1/probe. */
export const probeResponse = z.object({ now: z.number().int().describe("The service's clock, epoch ms.") });

/** `data` of POST /v1/collect and POST /v1/report. */
export const hitResponse = z.object({
  observation_id: z.string().describe("Id of the recorded observation (obs_...)."),
  session_id: sessionId,
});

const decision = z.enum(["allow", "review", "block"]);

/** One observation as GET /v1/projects/{projectId}/observations lists it (docs/api.md, "Observations and bot policy"). */
export const observationResponse = z.object({
  id: z.string(),
  kind: z.enum(["page.view", "form.submit"]),
  action: z.string(),
  session_id: z.string(),
  created_at: z.iso.datetime(),
  score: z.number().min(0).max(1).describe("Probability that the hit is a bot or automation."),
  decision,
  reasons: z.array(z.string()),
  ua: z.object({
    browser: z.string().nullable(),
    os: z.string().nullable(),
    device: z.string().nullable(),
    bot_kind: z
      .enum(POLICY_KINDS as [PolicyKind, ...PolicyKind[]])
      .nullable()
      .describe(
        "Registry kind of a bot the UA names; automation for automation UAs and strong tells; client for a non-browser client no list names (reason ua_client:<tell>); null for a browser.",
      ),
    bot_name: z.string().nullable(),
  }),
  bot_id: z.string().nullable(),
  bot_operator: z.string().nullable(),
  bot_verified: z.boolean().nullable().describe("true verified, false spoofed, null not a bot or unverifiable."),
  policy: z.object({ action: z.enum(["allow", "block"]), rule: z.string() }).nullable().describe("The bot policy rule that set the decision."),
  dry_run: z
    .object({ action: z.enum(["allow", "block"]), rule: z.string() })
    .nullable()
    .describe("The bot policy rule in dry run (the policy's `dry_run`) that would have set the decision; it did not. Null when none applied."),
  ip: z.string().nullable(),
  country: z.string().nullable(),
  page: z.string().nullable().describe("The page's path, without query or fragment."),
  fingerprint: z.string().nullable(),
  token_valid: z.boolean(),
  client_tells: z.array(z.string()),
});

/** `data` of GET /v1/projects/{projectId}/observations. */
export const observationsResponse = z.object({
  items: z.array(observationResponse).describe("Newest first."),
  next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null at the end."),
});

/** Query parameters of GET /v1/projects/{projectId}/observations. */
export const observationsQuery = {
  limit: pageLimit("Observations"),
  /** Read as the sequence number the page starts below. */
  cursor: z
    .string()
    .regex(/^[0-9a-z]{1,11}$/, NOT_A_CURSOR)
    .transform((text, ctx) => {
      const seq = parseInt(text, 36);
      if (Number.isSafeInteger(seq)) return seq;
      ctx.addIssue({ code: "custom", message: NOT_A_CURSOR });
      return z.NEVER;
    })
    .optional()
    .describe("`next_cursor` of the previous page."),
  session_id: z.string().optional().describe("Only this beacon session's observations."),
  kind: z.enum(["page.view", "form.submit"]).optional().describe("Only observations of this kind."),
};
