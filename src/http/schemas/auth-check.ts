import { z } from "zod";
import { UNSAFE_TEXT_MESSAGE, isCleanLine } from "../../shared/text.js";
import { bodyIp } from "./ip.js";
import { textLine } from "./text.js";
import { sessionContinuity } from "./sessions.js";

/**
 * POST /v1/auth/check: the fields of POST /v1/sessions/resolve (so a backend builds one object
 * for the pre-flight and for the resolve that follows it), with the account optional and the
 * client's user agent added. The "at least one of" rule is a 422, checked in the route.
 */
export const authCheckBody = z.strictObject({
  observation_type: z.enum(["auth.signup", "auth.login"]),
  /** Only to tell the account's own bindings from other accounts'; never bound here. */
  external_user_id: textLine(256).optional(),
  session_id: textLine(128).optional(),
  fingerprint: z.union([textLine(512), z.number().finite()]).optional(),
  ip: bodyIp.optional(),
  email: z.string().max(320).refine(isCleanLine, UNSAFE_TEXT_MESSAGE).optional(),
  /** The User-Agent header of the login or signup request. */
  user_agent: z.string().max(2048).optional(),
});
export type AuthCheckBody = z.infer<typeof authCheckBody>;

/*
 * Response schema of POST /v1/auth/check: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const count = z.number().int().min(0);
const probability = z.number().min(0).max(1);

/** `data` of POST /v1/auth/check. */
export const authCheckResponse = z.object({
  request_id: z.string(),
  bound: z.literal(false).describe("Always false: a pre-flight never binds; POST /v1/sessions/resolve does, afterwards."),
  observation_type: z.enum(["auth.signup", "auth.login"]),
  verdict: z.object({
    score: probability,
    decision: z.enum(["allow", "review", "block"]),
    reasons: z.array(z.string()).describe("Edge reasons (the session's latest hit, or the IP's), then the correlation's, then the pre-flight's own."),
  }),
  continuity: sessionContinuity,
  correlation: z
    .object({
      accounts_sharing_session: count,
      accounts_sharing_fingerprint: count,
      accounts_sharing_ip: count,
      accounts_sharing_prefix: count,
      linked_emails: count,
      shared_network: z.boolean().describe("The IP is carrier-grade NAT or mobile: shared by many subscribers."),
      known_account: z.boolean().nullable().describe("external_user_id was bound by an earlier resolve; null without external_user_id."),
    })
    .describe("Accounts already bound to each identifier, other than external_user_id: what a resolve would count if the account were bound now."),
  signals: z.object({
    ip: z
      .object({ country_code: z.string().nullable(), asn: z.number().int().nullable(), is_datacenter: z.boolean(), is_vpn: z.boolean(), is_proxy: z.boolean(), is_scanner: z.boolean() })
      .nullable()
      .describe("null without ip."),
    user_agent: z
      .object({ browser: z.string().nullable(), os: z.string().nullable(), automation: z.boolean(), bot: z.string().nullable().describe("Id of the registered bot the UA names.") })
      .nullable()
      .describe("null without user_agent."),
    email: z
      .object({ risk: probability, disposable: z.boolean(), domain: z.string(), reasons: z.array(z.string()), weighed: z.boolean().describe("Counted in the verdict: on signups only.") })
      .nullable()
      .describe("null without email."),
  }),
  verdict_source: z.enum(["session", "ip", "none"]),
  processing_time_ms: z.number().min(0),
});
