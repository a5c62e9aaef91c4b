import type { IpFacts } from "../../datasets/ip-dataset.js";
import { SCORE_WEIGHTS } from "../../scoring/observation.js";
import { decide } from "../../scoring/check.js";
import { parseEmail } from "../../scoring/email.js";
import { formatIp, parseIp, type ParsedIp } from "../../shared/ip.js";
import type { ResolveCounts } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import { defineRoute } from "../route.js";
import { resolveBody, resolveResponse } from "../schemas/sessions.js";
import { ackOrThrow } from "./ack.js";

/** A session first seen less than this long ago is "fresh" (docs/api.md, "POST /v1/sessions/resolve"). */
export const FRESH_SESSION_MS = 10 * 60_000;

/** Log-odds the correlation adds to the edge verdict (docs/api.md, "POST /v1/sessions/resolve"). */
export const RESOLVE_WEIGHTS = Object.freeze({
  shared_session: 1.5, // another account on this browser session…
  shared_session_each: 0.5, // …and each further one
  shared_fingerprint: 1.0,
  shared_fingerprint_each: 0.3,
  shared_ip: 0.5, // three or more other accounts on one (not shared-network) IP
  many_emails: 1.0, // two or more other emails on this session
  cap: 4.0,
});

/**
 * POST /v1/sessions/resolve (2 credits, secret key with the `sessions` scope): binds
 * an account to the browser session, fingerprint, IP and email it came with, and answers the
 * session's edge verdict, its continuity and how many other accounts share each identifier.
 */
export function sessionsResolvePost(deps: AppDeps) {
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
      const orgId = principal!.orgId;
      let ip: ParsedIp | null = null;
      if (body.ip !== undefined) {
        ip = parseIp(body.ip.trim());
        if (!ip) throw new ApiError("VALIDATION_ERROR", "body.ip: not an IPv4 or IPv6 address.");
      }
      const facts = ip ? deps.ipDatasets.get().lookup(ip) : null;
      const sharedNetwork = ip !== null && (isCgnat(ip) || facts!.type.mobile);
      const h = deps.pseudonyms;
      const email = body.email !== undefined ? normalEmail(body.email) : undefined;

      // Observations answered so far go to the writer ahead of this intent (messages keep their
      // order), so the session read after the ack includes a page view sent just before.
      if (body.session_id !== undefined) deps.flushObservations();
      const ack = ackOrThrow(
        await deps.store.send({
          op: "sessions.resolve",
          request: {
            orgId,
            user: h.hash("user", body.external_user_id),
            session: body.session_id !== undefined ? h.hash("session", body.session_id) : undefined,
            fingerprint: body.fingerprint !== undefined ? h.hash("fingerprint", String(body.fingerprint)) : undefined,
            ip: ip ? h.hash("ip", formatIp(ip)) : undefined, // canonical text: ::ffff:1.2.3.4 and 1.2.3.4 are one address
            prefix: ip ? h.hash("prefix", prefixOf(ip)) : undefined,
            email: email !== undefined ? h.hash("email", email) : undefined,
            sharedNetwork,
            nowMs,
          },
        }),
      );
      const { ok: _ok, ...counts } = ack;
      // The beacon session: continuity and the edge verdict (read-only, from the writer's store).
      const projectId = body.session_id !== undefined ? deps.state.sessionProjects.get(body.session_id) : undefined;
      const project = projectId !== undefined ? deps.beacon.projects.get(projectId) : undefined;
      const session = project && project.org_id === orgId ? deps.state.sessions.get([project.id, body.session_id!]) : undefined;
      const continuity = session
        ? {
            found: true,
            first_seen: session.first_seen,
            last_seen: session.last_seen,
            age_seconds: Math.max(0, Math.round((nowMs - session.first_seen) / 1000)),
            observation_count: session.observation_count,
            is_fresh: nowMs - session.first_seen < FRESH_SESSION_MS,
          }
        : { found: false, first_seen: 0, last_seen: 0, age_seconds: 0, observation_count: 0, is_fresh: false };
      const edge = session
        ? { score: session.last.score, reasons: session.last.reasons, source: "session" as const }
        : ipVerdict(facts);
      return {
        data: {
          request_id: requestId,
          bound: true,
          verdict: verdictOf(edge, counts, sharedNetwork),
          continuity,
          correlation: {
            accounts_sharing_session: counts.accounts_sharing_session,
            accounts_sharing_fingerprint: counts.accounts_sharing_fingerprint,
            accounts_sharing_ip: counts.accounts_sharing_ip,
            linked_emails: counts.linked_emails,
            accounts_sharing_prefix: counts.accounts_sharing_prefix,
            linked_accounts: counts.linked_accounts,
            shared_network: sharedNetwork,
          },
          verdict_source: edge.source,
          processing_time_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
        },
        credits: 2,
      };
    },
  });
}

/** Without a (known) session: the IP's reputation, scored like a beacon hit's IP part. */
function ipVerdict(facts: IpFacts | null): { score: number; reasons: string[]; source: "ip" | "none" } {
  if (!facts) return { score: sigmoid(SCORE_WEIGHTS.base), reasons: [], source: "none" };
  const reasons: string[] = [];
  let x: number = SCORE_WEIGHTS.base;
  if (facts.type.datacenter || facts.type.hosting || facts.type.cloud) {
    reasons.push("ip_datacenter");
    x += SCORE_WEIGHTS.ip_datacenter;
  }
  if (facts.risk.vpn) {
    reasons.push("ip_vpn");
    x += SCORE_WEIGHTS.ip_vpn;
  }
  if (facts.risk.proxy || facts.risk.tor || facts.risk.residential_proxy) {
    reasons.push("ip_proxy");
    x += SCORE_WEIGHTS.ip_proxy;
  }
  if (facts.risk.scanner) {
    reasons.push("ip_scanner");
    x += SCORE_WEIGHTS.ip_scanner;
  }
  return { score: sigmoid(x), reasons, source: "ip" };
}

/** The edge verdict moved by what the correlation says (multi-account use of one browser). */
function verdictOf(edge: { score: number; reasons: string[] }, c: ResolveCounts, sharedNetwork: boolean) {
  const W = RESOLVE_WEIGHTS;
  const reasons = [...edge.reasons];
  let add = 0;
  if (c.accounts_sharing_session > 0) {
    add += W.shared_session + W.shared_session_each * (c.accounts_sharing_session - 1);
    reasons.push("multi_account:session");
  }
  if (c.accounts_sharing_fingerprint > 0) {
    add += W.shared_fingerprint + W.shared_fingerprint_each * (c.accounts_sharing_fingerprint - 1);
    reasons.push("multi_account:fingerprint");
  }
  if (!sharedNetwork && c.accounts_sharing_ip >= 3) {
    add += W.shared_ip;
    reasons.push("shared_ip");
  }
  if (c.linked_emails >= 2) {
    add += W.many_emails;
    reasons.push("many_emails");
  }
  const score = Math.round(sigmoid(logit(edge.score) + Math.min(W.cap, add)) * 10_000) / 10_000;
  return { score, decision: decide(score), reasons };
}

/** Carrier-grade NAT space (RFC 6598, 100.64.0.0/10): many subscribers behind one address. */
function isCgnat(ip: ParsedIp): boolean {
  return ip.version === 4 && ip.v4 >>> 22 === (100 << 2) + 1;
}

/** The /24 (IPv4) or /48 (IPv6) network of an address, as text. */
function prefixOf(ip: ParsedIp): string {
  if (ip.version === 4) return `${ip.v4 >>> 8}/24`;
  return `${ip.words[0]}:${ip.words[1]! >>> 16}/48`;
}

/** The address as one mailbox: lower case, +tag and provider-ignored dots removed. */
function normalEmail(email: string): string {
  const p = parseEmail(email);
  return p.ok ? `${p.value.normalizedLocal}@${p.value.normalizedDomain}` : email.trim().toLowerCase();
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}
