import type { RdnsResult } from "../../datasets/rdns.js";
import { formText } from "../../scoring/content/index.js";
import { MAX_INPUT_CHARS } from "../../scoring/content/features.js";
import { fuseDeep, nameKind, summarizeSession, type DeepFindings, type FieldResult, type SessionSummary } from "../../scoring/deep.js";
import type { EmailAnalysis } from "../../scoring/email.js";
import { formatIp } from "../../shared/ip.js";
import { peekCounts } from "../../store/front/bindings-view.js";
import type { ObservationRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { deepBody, deepMetadata, deepResponse } from "../schemas/deep.js";
import { joinKeysOf } from "../../front/sessions/identifiers.js";
import { orgSession } from "../../front/sessions/session.js";
import { countDecision } from "../../front/counters.js";
import { dataScope, isTestPrincipal, type KeyPrincipal } from "../../front/auth.js";
import { magicDecision } from "../../scoring/test-mode.js";
import { checkSubmission, keptHistory, type CheckOutcome } from "./check.post.js";
import { listObservations, syncObservations } from "./observations.get.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "challenge" | "content" | "email" | "flushObservations" | "ipDatasets" | "learning" | "pseudonyms" | "rdns" | "reads" | "store" | "testHistory" | "testMode">;

/** The check's price, and the deep analysis's when at least one deep block resolved. */
const CHECK_CREDITS = 2;
const DEEP_CREDITS = 4;
/** Most content-model readings per call (fields × windows of the classifier's input length). */
const MAX_READINGS = 32;
/** Most hits of one session summed up, and pages of a project's observations examined for them (5,000 each). */
const HISTORY_MAX_HITS = 1000;
const HISTORY_MAX_PAGES = 8;

type Block = "network" | "email" | "session" | "content";

/**
 * POST /v1/check/deep (4 credits; 2 when no deep block could resolve): the form check, then the
 * signals too slow for it: forward-confirmed reverse DNS of the IP, the e-mail's full analysis
 * with its MX answer, the `_fs` session's whole history, and the content model on each text field
 * on its own. See docs/api.md, "POST /v1/check/deep".
 */
export function checkDeepPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/check/deep",
    auth: { kind: "secret" },
    body: deepBody,
    minCredits: CHECK_CREDITS,
    docs: {
      summary: "Deep analysis of a form submission",
      description: [
        "The form check (`POST /v1/check`, same body, same answer fields) plus four blocks of evidence too slow for it, each stating whether it `resolved` or was `skipped` and why: `network` (forward-confirmed reverse DNS of metadata.ip), `email` (the address's full analysis with its MX answer), `session` (the whole history of the `_fs` session named by `session_id` or by the beacon's field in form_data) and `content` (the content model on each text field on its own, over every window of the classifier's input length).",
        "What the blocks found moves the check's score by fixed log-likelihood ratios, listed in `rule_matches` with the check's own; `check` keeps what the check alone said.",
        "Costs 4 credits when at least one block resolved, 2 (the check's price) when none could (no inputs for them, or DNS unavailable); `metadata.deep` says which. Needs what POST /v1/check needs (422 MISSING_REQUIRED_DATA otherwise).",
      ].join("\n\n"),
      tag: "scoring",
      response: deepResponse,
      metadata: deepMetadata,
      credits: [CHECK_CREDITS, DEEP_CREDITS],
      errors: ["VALIDATION_ERROR", "MISSING_REQUIRED_DATA", "OVERLOADED", "NOT_READY"],
      example: EXAMPLE,
    },
    async handle({ principal, body, nowMs, requestId }) {
      const orgId = principal!.orgId;
      const test = isTestPrincipal(principal);
      // The reverse lookup starts at once, beside the check's own waits (MX, content model); the
      // address was parsed by the body's schema (schemas/ip.ts, bodyIp).
      const parsed = body.metadata?.ip?.parsed;
      const [check, rdns] = await Promise.all([checkSubmission(deps, orgId, body, nowMs, test), parsed ? deps.rdns.lookup(formatIp(parsed), deps.testMode.dnsOf(principal, nowMs)) : Promise.resolve(null)]);
      const sessionRef = body.session_id !== undefined ? { id: body.session_id, source: "session_id" as const } : check.beaconSession ? { id: check.beaconSession.sessionId, source: "beacon_field" as const } : null;
      const [session, content] = await Promise.all([sessionBlock(deps, principal!, sessionRef, nowMs), contentBlock(deps, check)]);
      const network = networkBlock(rdns);
      const email = emailBlock(check.email, check.mxCache);

      const findings: DeepFindings = {
        network: network.status === "resolved" ? { hostname: network.hostname, verified: network.hostname_verified, datasetsFlagHosting: check.input.ip?.datacenter ?? false } : null,
        emailReasons: email.status === "resolved" ? email.analysis!.reasons : null,
        session: session.summary,
        content: content.status === "resolved" ? { wholeText: content.whole_text_probability, strongest: content.strongest } : null,
      };
      const fused = fuseDeep(check.fused, findings);
      // A test-mode key's magic inputs decide the deep verdict and the check's own, as POST /v1/check answers them.
      const magic = test ? magicDecision(body.metadata?.email, body.metadata?.ip?.text) : null;
      if (magic) {
        Object.assign(fused, magic);
        Object.assign(check.data, magic);
      }
      const blocks = { network, email, session, content };
      const resolved = (Object.keys(blocks) as Block[]).filter((b) => blocks[b].status === "resolved");
      const skipped = (Object.keys(blocks) as Block[]).filter((b) => blocks[b].status === "skipped");
      const credits = resolved.length > 0 ? DEEP_CREDITS : CHECK_CREDITS;
      countDecision("POST /v1/check/deep", fused.decision);
      return {
        data: {
          ...check.data,
          score: fused.score,
          confidence: fused.confidence,
          decision: fused.decision,
          categories: fused.categories,
          rule_matches: fused.rule_matches,
          fusion: { method: `${check.data.fusion.method}; then deep findings as likelihood ratios`, model_version: `${check.data.fusion.model_version}+deep:1` },
          check: { score: check.data.score, decision: check.data.decision },
          deep: blocks,
        },
        credits,
        metadata: { deep: { resolved, skipped, credits } },
        // The history keeps the form check's verdict (the one feedback is about), as POST /v1/check would.
        history: keptHistory(deps, principal!, check, requestId, body.form_id, nowMs),
      };
    },
  });
}

/** The network block from the reverse lookup (null: no IP given). */
function networkBlock(r: RdnsResult | null) {
  if (r === null) return { status: "skipped" as const, reason: "not_given" as const, hostname: null, hostname_verified: null, name_kind: null, cache: null };
  if (!r.resolved) {
    const reason = r.outcome === "test_budget" ? ("test_budget" as const) : ("dns_unavailable" as const);
    return { status: "skipped" as const, reason, hostname: null, hostname_verified: null, name_kind: null, cache: null };
  }
  return {
    status: "resolved" as const,
    reason: null,
    hostname: r.hostname,
    hostname_verified: r.verified,
    // Anyone can set a PTR name: only a confirmed one says what the address is.
    name_kind: r.hostname !== null && r.verified ? nameKind(r.hostname) : null,
    cache: r.outcome,
  };
}

/** The e-mail block from the check's analysis: resolved when the MX lookup answered. */
function emailBlock(a: EmailAnalysis | null, mxCache: CheckOutcome["mxCache"]) {
  if (a === null) return { status: "skipped" as const, reason: "not_given" as const, analysis: null };
  if (!a.signals.valid_syntax) return { status: "skipped" as const, reason: "invalid_syntax" as const, analysis: a };
  if (mxCache === "test_budget") return { status: "skipped" as const, reason: "test_budget" as const, analysis: a };
  if (a.signals.mx.outcome !== "found" && a.signals.mx.outcome !== "none") return { status: "skipped" as const, reason: "dns_unavailable" as const, analysis: a };
  return { status: "resolved" as const, reason: null, analysis: a };
}

/**
 * The session block: the org's session (after every hit answered so far is stored), its newest
 * hits up to HISTORY_MAX_HITS, and the accounts bound to it. Read-only.
 */
async function sessionBlock(deps: Deps, principal: KeyPrincipal, ref: { id: string; source: "session_id" | "beacon_field" } | null, nowMs: number) {
  if (ref === null) return { status: "skipped" as const, reason: "not_given" as const, session_id: null, source: null, summary: null as SessionSummary | null };
  await syncObservations(deps);
  const session = await orgSession(deps, principal.orgId, ref.id, isTestPrincipal(principal));
  if (!session) return { status: "skipped" as const, reason: "not_found" as const, session_id: ref.id, source: ref.source, summary: null as SessionSummary | null };
  const want = Math.min(session.observation_count, HISTORY_MAX_HITS);
  const hits: ObservationRecord[] = [];
  let before = Number.MAX_SAFE_INTEGER;
  for (let page = 0; page < HISTORY_MAX_PAGES && hits.length < want; page++) {
    const r = await listObservations(deps, session.project_id, { limit: want - hits.length, before, sessionId: ref.id, kind: undefined });
    hits.push(...r.items);
    if (r.next === null) break;
    before = parseInt(r.next, 36);
  }
  const bound = (await peekCounts(deps.reads, dataScope(principal, principal.orgId), joinKeysOf(deps.pseudonyms, { sessionId: ref.id }))).accounts_sharing_session;
  const summary = summarizeSession(session, hits, hits.length >= session.observation_count, bound, nowMs);
  return { status: "resolved" as const, reason: null, session_id: ref.id, source: ref.source, summary: summary as SessionSummary | null };
}

/**
 * The content block: each text field of the check read on its own (the same field rules), in
 * windows of the classifier's input length, so text past the joined form's first window is read
 * too. A field's result is its strongest window.
 */
async function contentBlock(deps: Deps, check: CheckOutcome) {
  const readings: Array<{ field: string; text: string }> = [];
  let truncated = false;
  for (const field of check.text.fields) {
    const text = formText({ [field]: check.fields![field] }).text;
    for (let at = 0; at < text.length; at += MAX_INPUT_CHARS) {
      if (readings.length === MAX_READINGS) {
        truncated = true;
        break;
      }
      readings.push({ field, text: text.slice(at, at + MAX_INPUT_CHARS) });
    }
  }
  const base = { whole_text_probability: check.content ? check.content.spam_probability : null, truncated, model_version: deps.content.version };
  if (readings.length === 0) return { status: "skipped" as const, reason: "not_given" as const, ...base, fields: [], strongest: null as FieldResult | null };
  const analyses = await Promise.all(readings.map((r) => deps.content.analyze(r.text)));
  const byField = new Map<string, { field: string; spam_probability: number; language: string | null; flags: Set<string>; fraud: number; cold_email: number; windows: number }>();
  readings.forEach((r, i) => {
    const a = analyses[i]!;
    const f = byField.get(r.field);
    if (!f) {
      byField.set(r.field, { field: r.field, spam_probability: a.spam_probability, language: a.language, flags: new Set(a.flags), fraud: a.fraud, cold_email: a.cold_email, windows: 1 });
      return;
    }
    f.spam_probability = Math.max(f.spam_probability, a.spam_probability);
    for (const flag of a.flags) f.flags.add(flag);
    f.fraud = Math.max(f.fraud, a.fraud);
    f.cold_email = Math.max(f.cold_email, a.cold_email);
    f.windows++;
  });
  const fields = [...byField.values()].map((f) => ({ ...f, flags: [...f.flags], fraud: round(f.fraud), cold_email: round(f.cold_email) }));
  const top = fields.reduce((best, f) => (f.spam_probability > best.spam_probability ? f : best));
  return { status: "resolved" as const, reason: null, ...base, fields, strongest: { field: top.field, spam_probability: top.spam_probability } as FieldResult | null };
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

const EXAMPLE = {
  body: {
    form_id: "signup",
    form_data: { name: "Jane Doe", message: "Hello, I would like a quote for 40 units delivered to Lyon." },
    metadata: { email: "jane.doe@example.com", ip: "203.0.113.7", user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", form_loaded_at: 1_763_677_140_000 },
    session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
  },
  response: {
    score: 0.0299,
    confidence: 0.895,
    decision: "allow",
    categories: { spam: 0.0299, fraud: 0.0121, cold_email: 0.0412 },
    signals: {
      ip: { risk: 0.05, country_code: "DE", is_vpn: false, is_datacenter: false },
      email: { risk: 0.0759, disposable: false, domain: "example.com" },
      content: { risk: 0.0402, spam_probability: 0.0402, language: "en", flags: [], fields: ["message", "name"] },
    },
    rule_matches: [
      { rule: "content_model", signal: "content", contribution: -0.981, detail: "spam_probability 0.0402" },
      { rule: "session_worst_verdict", signal: "session", contribution: -0.045, detail: "worst of 3 hits 0.0474" },
    ],
    fusion: {
      method: "log-odds sum: calibrated content probability + per-signal likelihood ratios (naive Bayes); then deep findings as likelihood ratios",
      model_version: "content:content-2.0748b140a864+fusion:1+deep:1",
    },
    check: { score: 0.0312, decision: "allow" },
    deep: {
      network: { status: "resolved", reason: null, hostname: "host-203-0-113-7.example.net", hostname_verified: true, name_kind: "other", cache: "miss" },
      email: {
        status: "resolved",
        reason: null,
        analysis: {
          email: "jane.doe@example.com",
          normalized: "jane.doe@example.com",
          domain: "example.com",
          score: 0.0759,
          decision: "allow",
          reasons: [],
          signals: {
            valid_syntax: true,
            syntax_error: null,
            disposable: false,
            free_provider: false,
            role_account: false,
            role_category: null,
            plus_address: false,
            typo_suggestion: null,
            mx: { found: true, outcome: "found", hosts: ["mx1.example.com"], implicit: false, null_mx: false },
          },
        },
      },
      session: {
        status: "resolved",
        reason: null,
        session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
        source: "session_id",
        summary: {
          first_seen: 1_763_676_900_000,
          last_seen: 1_763_677_180_000,
          age_seconds: 300,
          observation_count: 3,
          examined: 3,
          complete: true,
          kinds: { page_view: 2, form_submit: 1 },
          decisions: { allow: 3, review: 0, block: 0 },
          latest_score: 0.0474,
          worst_score: 0.0474,
          reasons: [],
          tells: [],
          distinct_ips: 1,
          countries: ["DE"],
          distinct_user_agents: 1,
          distinct_fingerprints: 1,
          token_invalid: 0,
          bot_ids: [],
          accounts_bound: 0,
        },
      },
      content: {
        status: "resolved",
        reason: null,
        whole_text_probability: 0.0402,
        fields: [
          { field: "message", spam_probability: 0.0388, language: "en", flags: [], fraud: 0.0121, cold_email: 0.0412, windows: 1 },
          { field: "name", spam_probability: 0.0311, language: null, flags: [], fraud: 0, cold_email: 0, windows: 1 },
        ],
        strongest: { field: "message", spam_probability: 0.0388 },
        truncated: false,
        model_version: "content-2.0748b140a864",
      },
    },
  },
  metadata: { deep: { resolved: ["network", "email", "session", "content"], skipped: [], credits: 4 } },
};
