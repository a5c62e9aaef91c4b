import { magicDecision } from "../../scoring/test-mode.js";
import { dataScope, isTestPrincipal } from "../../front/auth.js";
import type { IpFacts } from "../../datasets/ip-dataset.js";
import { analyzeEmailWithMx } from "../../scoring/email.js";
import { preflightVerdict } from "../../scoring/session-verdict.js";
import type { ParsedIp } from "../../shared/ip.js";
import { peekCounts } from "../../store/front/bindings-view.js";
import { uaClassifierFor } from "../../front/beacon/hits.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { defineRoute } from "../route.js";
import { authCheckBody, authCheckResponse } from "../schemas/auth-check.js";
import { testDnsMetadata } from "../schemas/email.js";
import { isCgnat, joinKeysOf } from "../../front/sessions/identifiers.js";
import { continuityOf, edgeVerdictOf, orgSession } from "../../front/sessions/session.js";
import { syncObservations } from "./observations.get.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "email" | "flushObservations" | "ipDatasets" | "pseudonyms" | "reads" | "store" | "testMode">;

/** Credits of a pre-flight: the price of the resolve it precedes and of a form check. */
const CREDITS = 2;

/**
 * POST /v1/auth/check (2 credits, secret key with the `sessions` scope): a verdict with reasons
 * before a login or signup, from the `_fs` session, the IP, the user agent, the e-mail and the
 * accounts already bound to them, without binding anything. See docs/api.md, "POST /v1/auth/check".
 */
export function authCheckPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/auth/check",
    auth: { kind: "secret", scope: "sessions" },
    body: authCheckBody,
    minCredits: CREDITS,
    docs: {
      summary: "Pre-flight a login or signup",
      description: [
        "Call it from your backend before you let a login or signup through. It takes the same fields as `POST /v1/sessions/resolve` (the account optional) plus the request's `user_agent`, and answers a verdict with reasons: the `_fs` session's latest beacon verdict (or the IP's reputation), moved by the accounts already bound to the session, fingerprint and IP, an unknown session id, the user agent and, on signups, the e-mail address.",
        "Nothing is bound or stored: `bound` is always false. After the event succeeds, `POST /v1/sessions/resolve` binds the account; `correlation` here counts what that resolve would count if it ran now.",
        "Needs at least one of session_id, fingerprint, ip, email (422 MISSING_REQUIRED_DATA otherwise) and a secret key with the `sessions` scope.",
      ].join("\n\n"),
      tag: "sessions",
      response: authCheckResponse,
      metadata: testDnsMetadata,
      credits: [CREDITS],
      errors: ["VALIDATION_ERROR", "MISSING_REQUIRED_DATA", "NOT_READY"],
      example: {
        body: {
          observation_type: "auth.signup",
          session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
          ip: "203.0.113.7",
          email: "jane.doe@mailinator.com",
          user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        },
        response: {
          request_id: "req_4fQ9x2LmT7aZ_1d",
          bound: false,
          observation_type: "auth.signup",
          verdict: { score: 0.6223, decision: "review", reasons: ["multi_account:session", "email_disposable"] },
          continuity: { found: true, first_seen: 1_763_676_900_000, last_seen: 1_763_677_180_000, age_seconds: 300, observation_count: 3, is_fresh: true },
          correlation: { accounts_sharing_session: 1, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 1, accounts_sharing_prefix: 1, linked_emails: 1, shared_network: false, known_account: null },
          signals: {
            ip: { country_code: "DE", asn: 3320, is_datacenter: false, is_vpn: false, is_proxy: false, is_scanner: false },
            user_agent: { browser: "Firefox 133", os: "Linux", automation: false, bot: null },
            email: { risk: 0.8808, disposable: true, domain: "mailinator.com", reasons: ["disposable_domain"], weighed: true },
          },
          verdict_source: "session",
          processing_time_ms: 0.91,
        },
      },
    },
    async handle({ principal, body, nowMs, requestId, startedAt }) {
      if (body.session_id === undefined && body.fingerprint === undefined && body.ip === undefined && body.email === undefined) {
        throw new ApiError("MISSING_REQUIRED_DATA", "Nothing to check: give at least one of session_id, fingerprint, ip, email.");
      }
      const orgId = principal!.orgId;
      // Parsed by the body's schema (schemas/ip.ts, bodyIp).
      const ip: ParsedIp | null = body.ip !== undefined ? body.ip.parsed : null;
      const dataset = deps.ipDatasets.get();
      const facts = ip ? dataset.lookup(ip) : null;
      const sharedNetwork = ip !== null && (isCgnat(ip) || facts!.type.mobile);
      const ua = body.user_agent !== undefined ? uaClassifierFor(dataset).classify(body.user_agent) : null;
      const signup = body.observation_type === "auth.signup";

      // Beacon hits answered before this call are stored before the session is read; the MX
      // lookup (cached, bounded by FS_RDNS_TIMEOUT_MS) runs meanwhile.
      const [, email] = await Promise.all([
        body.session_id !== undefined ? syncObservations(deps) : Promise.resolve(),
        body.email !== undefined ? analyzeEmailWithMx(deps.email, body.email, deps.testMode.dnsOf(principal, nowMs)) : Promise.resolve(null),
      ]);
      const test = isTestPrincipal(principal);
      const session = body.session_id !== undefined ? await orgSession(deps, orgId, body.session_id, test) : undefined;
      // Read-only: the counts a resolve would answer, from what the writer has committed.
      const keys = joinKeysOf(deps.pseudonyms, { externalUserId: body.external_user_id, sessionId: body.session_id, fingerprint: body.fingerprint, ip, email: body.email });
      // A test key's bindings are its org's test scope's (records.ts scopedId).
      const peeked = peekCounts(deps.reads, dataScope(principal!, orgId), keys);
      const counts = peeked instanceof Promise ? await peeked : peeked;
      const edge = edgeVerdictOf(session, facts);
      const verdict = preflightVerdict(edge, counts, sharedNetwork, {
        sessionUnknown: body.session_id !== undefined && session === undefined,
        ua: ua ? { present: body.user_agent!.trim() !== "", automation: ua.automation, bot: ua.bot !== null, client: ua.client } : null,
        // On a login the address is the account's own, accepted at its signup: reported, not weighed.
        emailReasons: email && signup ? email.analysis.reasons : null,
      });
      const magic = test ? magicDecision(body.email, body.ip?.text) : null;
      if (magic) Object.assign(verdict, magic);
      // An account judged block: its webhook event is stored before the answer (front/webhook-blocks.ts).
      if (verdict.decision === "block" && body.external_user_id !== undefined) {
        const projectId = session?.project_id ?? principal!.key.project_id;
        await deps.beacon.blocks.blocked({ orgId, projectId, type: "account.blocked", subject: body.external_user_id, reasons: verdict.reasons, livemode: !test, nowMs });
      }
      return {
        data: {
          request_id: requestId,
          bound: false,
          observation_type: body.observation_type,
          verdict,
          continuity: continuityOf(session, nowMs),
          correlation: { ...counts, shared_network: sharedNetwork },
          signals: {
            ip: facts ? ipSignals(facts) : null,
            user_agent: ua ? { browser: ua.browser, os: ua.os, automation: ua.automation, bot: ua.bot?.bot_id ?? null } : null,
            email: email
              ? { risk: email.analysis.score, disposable: email.analysis.signals.disposable, domain: email.analysis.domain ?? "", reasons: email.analysis.reasons, weighed: signup }
              : null,
          },
          verdict_source: edge.source,
          processing_time_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
        },
        credits: CREDITS,
        // A test key whose org spent its DNS budget: the answer says its MX was not looked up.
        ...(email?.mxCache === "test_budget" ? { metadata: { mx_cache: "test_budget" } } : {}),
      };
    },
  });
}

function ipSignals(facts: IpFacts) {
  return {
    country_code: facts.country,
    asn: facts.asn,
    is_datacenter: facts.type.datacenter || facts.type.hosting || facts.type.cloud,
    is_vpn: facts.risk.vpn,
    is_proxy: facts.risk.proxy || facts.risk.tor || facts.risk.residential_proxy,
    is_scanner: facts.risk.scanner,
  };
}
