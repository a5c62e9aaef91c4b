import { verdictOf } from "../../scoring/session-verdict.js";
import type { ParsedIp } from "../../shared/ip.js";
import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { ApiError } from "../../shared/errors.js";
import { defineRoute } from "../route.js";
import { resolveBody, resolveResponse } from "../schemas/sessions.js";
import { isCgnat, joinKeysOf } from "../../front/sessions/identifiers.js";
import { continuityOf, edgeVerdictOf } from "../../front/sessions/session.js";
import { ackOrThrow } from "./ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "flushObservations" | "ipDatasets" | "pseudonyms" | "store">;

/**
 * POST /v1/sessions/resolve (2 credits, secret key with the `sessions` scope): binds
 * an account to the browser session, fingerprint, IP and email it came with, and answers the
 * session's edge verdict, its continuity and how many other accounts share each identifier.
 */
export function sessionsResolvePost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/sessions/resolve",
    auth: { kind: "secret", scope: "sessions" },
    body: resolveBody,
    minCredits: 2,
    docs: {
      summary: "Resolve a session",
      description: [
        "Binds an account (`external_user_id`) to the browser session, fingerprint, IP and e-mail it came with, and answers the verdict: the session's latest beacon score (or, without a known session, the IP's reputation) moved by how many other accounts share each identifier. Identifiers are stored as keyed hashes only.",
        "Needs at least one of session_id, fingerprint, ip (422 MISSING_REQUIRED_DATA otherwise) and a secret key with the `sessions` scope.",
      ].join("\n\n"),
      tag: "sessions",
      response: resolveResponse,
      credits: [2],
      errors: ["VALIDATION_ERROR", "MISSING_REQUIRED_DATA", "NOT_READY"],
      example: {
        body: { external_user_id: "user_48213", observation_type: "auth.signup", session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A", ip: "203.0.113.7", email: "jane.doe@example.com" },
        response: {
          request_id: "req_4fQ9x2LmT7aZ_1c",
          bound: true,
          verdict: { score: 0.0474, decision: "allow", reasons: [] },
          continuity: { found: true, first_seen: 1_763_676_900_000, last_seen: 1_763_677_180_000, age_seconds: 300, observation_count: 3, is_fresh: true },
          correlation: {
            accounts_sharing_session: 0,
            accounts_sharing_fingerprint: 0,
            accounts_sharing_ip: 0,
            linked_emails: 1,
            accounts_sharing_prefix: 0,
            linked_accounts: 0,
            shared_network: false,
            known_account: false,
          },
          verdict_source: "session",
          processing_time_ms: 0.38,
        },
      },
    },
    async handle({ principal, body, nowMs, requestId, startedAt }) {
      if (body.session_id === undefined && body.fingerprint === undefined && body.ip === undefined) {
        throw new ApiError("MISSING_REQUIRED_DATA", "Nothing to bind on: give at least one of session_id, fingerprint, ip.");
      }
      // A test key binds in its org's test scope and reads its test sessions (records.ts scopedId).
      const orgId = dataScope(principal!, principal!.orgId);
      // Parsed by the body's schema (schemas/ip.ts, bodyIp).
      const ip: ParsedIp | null = body.ip !== undefined ? body.ip.parsed : null;
      const facts = ip ? deps.ipDatasets.get().lookup(ip) : null;
      const sharedNetwork = ip !== null && (isCgnat(ip) || facts!.type.mobile);
      const keys = joinKeysOf(deps.pseudonyms, { sessionId: body.session_id, fingerprint: body.fingerprint, ip, email: body.email });

      // Observations answered so far go to the writer ahead of this intent (messages keep their
      // order), so the session read after the ack includes a page view sent just before.
      if (body.session_id !== undefined) deps.flushObservations();
      const ack = ackOrThrow(
        await deps.store.send({
          op: "sessions.resolve",
          request: { orgId, user: deps.pseudonyms.hash("user", body.external_user_id), ...keys, sharedNetwork, nowMs },
          sessionId: body.session_id,
        }),
      );
      // The beacon session (continuity and the edge verdict), as the writer's transaction read it.
      const { ok: _ok, session, ...counts } = ack;
      const edge = edgeVerdictOf(session, facts);
      return {
        data: {
          request_id: requestId,
          bound: true,
          verdict: verdictOf(edge, counts, sharedNetwork),
          continuity: continuityOf(session, nowMs),
          correlation: {
            accounts_sharing_session: counts.accounts_sharing_session,
            accounts_sharing_fingerprint: counts.accounts_sharing_fingerprint,
            accounts_sharing_ip: counts.accounts_sharing_ip,
            linked_emails: counts.linked_emails,
            accounts_sharing_prefix: counts.accounts_sharing_prefix,
            linked_accounts: counts.linked_accounts,
            shared_network: sharedNetwork,
            known_account: !counts.new_account,
          },
          verdict_source: edge.source,
          processing_time_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
        },
        credits: 2,
      };
    },
  });
}
