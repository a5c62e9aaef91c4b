import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";
import { checkBody, checkResponse } from "./check.js";
import { emailResponse } from "./email.js";
import { textLine } from "./text.js";

/**
 * POST /v1/check/deep: the body of POST /v1/check, plus the `_fs` session to read the history of
 * (when the form does not carry the beacon's field, or to name another session).
 */
export const deepBody = checkBody.extend({
  session_id: textLine(128).optional(),
});
export type DeepBody = z.infer<typeof deepBody>;

/*
 * Response schema of POST /v1/check/deep: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const probability = z.number().min(0).max(1);
const count = z.number().int().min(0);

/** Why a block was skipped; null when it resolved. */
const skipReason = (reasons: readonly [string, ...string[]]) => z.enum(reasons).nullable();

const networkBlock = z
  .object({
    status: z.enum(["resolved", "skipped"]),
    reason: skipReason(["not_given", "dns_unavailable", "test_budget"]).describe(
      "not_given: no metadata.ip; dns_unavailable: the lookup timed out or failed, or the resolver cannot see the public DNS; test_budget: a test-mode key whose org spent its DNS lookups (docs/api.md, Test mode), and the address was not cached.",
    ),
    hostname: z.string().nullable().describe("The address's PTR name; null when it has none (or skipped)."),
    hostname_verified: z.boolean().nullable().describe("The name's A/AAAA records contain the address (forward-confirmed); null without a name."),
    name_kind: z.enum(["server", "access", "other"]).nullable().describe("How the confirmed name reads: a server's (compute, vps…), a subscriber line's (dsl, cable, pool…), or neither."),
    cache: z.enum(["hit", "miss"]).nullable().describe("miss: DNS was queried for this call; hit: answered from the cache."),
  })
  .describe("Forward-confirmed reverse DNS of metadata.ip.");

const emailBlock = z
  .object({
    status: z.enum(["resolved", "skipped"]),
    reason: skipReason(["not_given", "invalid_syntax", "dns_unavailable", "test_budget"]).describe(
      "dns_unavailable: the MX lookup timed out or failed; test_budget: not looked up, a test-mode key whose org spent its DNS lookups (the domain was not cached); the list checks are still in `analysis`.",
    ),
    analysis: emailResponse.nullable().describe("The address's full analysis, as POST /v1/email answers it; null without metadata.email."),
  })
  .describe("The e-mail address with its MX lookup.");

const sessionBlock = z
  .object({
    status: z.enum(["resolved", "skipped"]),
    reason: skipReason(["not_given", "not_found"]).describe("not_given: no session_id and no valid beacon field; not_found: not a session of this org (unknown, or past retention)."),
    session_id: z.string().nullable(),
    source: z.enum(["session_id", "beacon_field"]).nullable().describe("Where the session id came from."),
    summary: z
      .object({
        first_seen: z.number().int().describe("Epoch ms."),
        last_seen: z.number().int(),
        age_seconds: count,
        observation_count: count.describe("Hits the session has had."),
        examined: count.describe("Hits read for this summary, newest first."),
        complete: z.boolean().describe("Every hit of the session was read."),
        kinds: z.object({ page_view: count, form_submit: count }),
        decisions: z.object({ allow: count, review: count, block: count }),
        latest_score: probability,
        worst_score: probability,
        reasons: z.array(z.object({ reason: z.string(), count })).describe("Reasons of the hits read, most frequent first, at most 20."),
        tells: z.array(z.string()).describe("Client tells seen in any hit."),
        distinct_ips: count,
        countries: z.array(z.string()),
        distinct_user_agents: count.describe("Browser and OS families, versions ignored."),
        distinct_fingerprints: count,
        token_invalid: count.describe("Hits without a valid handshake token."),
        bot_ids: z.array(z.string()),
        accounts_bound: count.describe("Accounts bound to the session by POST /v1/sessions/resolve."),
      })
      .nullable(),
  })
  .describe("The beacon session's full history.");

const fieldResult = z.object({
  field: z.string(),
  spam_probability: probability.describe("The highest of the field's windows."),
  language: z.string().nullable(),
  flags: z.array(z.enum(FLAGS)),
  fraud: probability,
  cold_email: probability,
  windows: z.number().int().min(1).describe("Stretches of the classifier's input length the field was read in."),
});

const contentBlock = z
  .object({
    status: z.enum(["resolved", "skipped"]),
    reason: skipReason(["not_given"]).describe("not_given: the form has no text."),
    whole_text_probability: probability.nullable().describe("The check's reading of the joined text."),
    fields: z.array(fieldResult).describe("Each text field read on its own, in the check's order."),
    strongest: z.object({ field: z.string(), spam_probability: probability }).nullable(),
    truncated: z.boolean().describe("Some fields were left unread: at most 32 readings per call."),
    model_version: z.string(),
  })
  .describe("The content model on each text field, in windows of the classifier's input length.");

/** `data` of POST /v1/check/deep: the check's answer, moved by the deep evidence, and the blocks. */
export const deepResponse = checkResponse.extend({
  rule_matches: z
    .array(
      z.object({
        rule: z.string(),
        signal: z.enum(["content", "email", "ip", "behaviour", "user_agent", "challenge", "beacon", "network", "session"]),
        contribution: z.number().describe("Log-odds added to the score (negative: less risky)."),
        detail: z.string().optional(),
      }),
    )
    .describe("The check's rule matches and the deep ones, largest contribution first."),
  check: z.object({ score: probability, decision: z.enum(["allow", "review", "block"]) }).describe("What POST /v1/check alone would have answered."),
  deep: z.object({ network: networkBlock, email: emailBlock, session: sessionBlock, content: contentBlock }),
});

/** Metadata fields of POST /v1/check/deep. */
export const deepMetadata = {
  deep: z
    .object({
      resolved: z.array(z.enum(["network", "email", "session", "content"])),
      skipped: z.array(z.enum(["network", "email", "session", "content"])),
      credits: z.union([z.literal(2), z.literal(4)]).describe("4 when at least one block resolved; 2 (the check's price) when none could."),
    })
    .describe("Which blocks resolved and what that cost."),
};
