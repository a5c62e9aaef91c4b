import { magicDecision } from "../../scoring/test-mode.js";
import { dataScope, isTestPrincipal, type KeyPrincipal } from "../../front/auth.js";
import { STRONG_TELLS } from "../../scoring/observation.js";
import type { IpFacts } from "../../datasets/ip-dataset.js";
import { fuseCheck, type CheckInput, type CheckResult } from "../../scoring/check.js";
import type { ParsedIp } from "../../shared/ip.js";
import { uaClassifierFor } from "../../front/beacon/hits.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { RawJson, jsonNumber as num } from "../respond.js";
import { defineRoute } from "../route.js";
import { checkBody, checkResponse, type CheckBody } from "../schemas/check.js";
import { testDnsMetadata } from "../schemas/email.js";
import { countDecision } from "../../front/counters.js";
import { FLAGS, formText, type ContentAnalysis, type ContentEvidence } from "../../scoring/content/index.js";
import { scopedId, splitScopedId, type CheckHistoryRecord, type ProjectRecord, type SessionRecord } from "../../store/records.js";
import type { OrgLearning } from "../../front/feedback/org-learning.js";
import { analyzeEmailWithMx, toCheckEmailSignals, type CheckEmailSignals, type EmailAnalysis, type EmailAnalysisWithMx } from "../../scoring/email.js";
import { verifyChallengeToken } from "../../front/challenge/index.js";
import { withStore } from "../../store/store-wait.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "challenge" | "content" | "email" | "ipDatasets" | "learning" | "reads" | "testHistory" | "testMode">;

/** The hidden field the beacon injects (its default name; sites may rename it with data-fs-field). */
const BEACON_FIELD = "_fs_signals";
const FUSION_METHOD = "log-odds sum: calibrated content probability + per-signal likelihood ratios (naive Bayes)";

/**
 * POST /v1/check (2 credits): scores a form submission. See docs/api.md, "POST /v1/check".
 * Needs at least one of metadata.email, metadata.ip, form_data (422 otherwise).
 */
export function checkPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/check",
    auth: { kind: "secret" },
    body: checkBody,
    minCredits: 2,
    docs: {
      summary: "Check a form submission",
      description: [
        "Scores a form submission: one calibrated probability that it is abuse, fused from the content model (the form's text), the e-mail address (syntax, lists, MX), the IP, the user agent, honeypot and timing, a proof-of-work token (`metadata.captcha_token`), and the beacon's hidden `_fs_signals` field (its token and its session's latest verdict). `rule_matches` lists every signal that moved the score.",
        "Needs at least one of metadata.email, metadata.ip or form_data (422 MISSING_REQUIRED_DATA otherwise). The content model runs on the scoring pool: 503 OVERLOADED when its queue is full.",
      ].join("\n\n"),
      tag: "scoring",
      response: checkResponse,
      metadata: testDnsMetadata,
      credits: [2],
      errors: ["VALIDATION_ERROR", "MISSING_REQUIRED_DATA", "OVERLOADED", "NOT_READY"],
      example: {
        body: {
          form_id: "contact",
          form_data: { name: "Jane Doe", message: "Hello, I would like a quote for 40 units delivered to Lyon." },
          metadata: { email: "jane.doe@example.com", ip: "203.0.113.7", user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", form_loaded_at: 1_763_677_140_000 },
        },
        response: {
          score: 0.0312,
          confidence: 0.595,
          decision: "allow",
          categories: { spam: 0.0312, fraud: 0.0121, cold_email: 0.0412 },
          signals: {
            ip: { risk: 0.05, country_code: "DE", is_vpn: false, is_datacenter: false },
            email: { risk: 0.0759, disposable: false, domain: "example.com" },
            content: { risk: 0.0402, spam_probability: 0.0402, language: "en", flags: [], fields: ["name", "message"] },
          },
          rule_matches: [{ rule: "content_model", signal: "content", contribution: -0.981, detail: "spam_probability 0.0402" }],
          fusion: { method: FUSION_METHOD, model_version: "content:content-2.0748b140a864+fusion:1" },
        },
      },
    },
    async handle({ principal, body, nowMs, requestId }) {
      const test = isTestPrincipal(principal);
      const outcome = await checkSubmission(deps, principal!.orgId, body, nowMs, test);
      const magic = test ? magicDecision(body.metadata?.email, body.metadata?.ip?.text) : null;
      if (magic) Object.assign(outcome.data, magic);
      countDecision("POST /v1/check", outcome.data.decision);
      const history = keptHistory(deps, principal!, outcome, requestId, body.form_id, nowMs);
      // A test key whose org spent its DNS budget: the answer says its MX was not looked up.
      if (outcome.mxCache === "test_budget") return { data: new RawJson(checkAnswerJson(outcome.data)), credits: 2, metadata: { mx_cache: "test_budget" }, history };
      return { data: new RawJson(checkAnswerJson(outcome.data)), credits: 2, history };
    },
  });
}

/** What a check gathered and concluded; POST /v1/check/deep builds its deeper answer on it. */
export interface CheckOutcome {
  /** The answer of POST /v1/check. */
  data: CheckAnswer;
  /** The fusion's input and result. */
  input: CheckInput;
  fused: CheckResult;
  /** The IP (parsed) and its dataset facts; null without metadata.ip. */
  ip: ParsedIp | null;
  facts: IpFacts | null;
  /** The e-mail's full analysis, MX included; null without metadata.email. */
  email: EmailAnalysis | null;
  /** Whether its MX lookup went to DNS (analyzeEmailWithMx); null without metadata.email. */
  mxCache: EmailAnalysisWithMx["mxCache"] | null;
  /** The form's fields without the beacon's, and the text the content model read. */
  fields: FormData | null;
  text: { text: string; fields: string[]; flags: string[] };
  content: ContentAnalysis | null;
  /** What the org's model learns from if the check gets feedback (null without text, or when the org keeps nothing and has no model). */
  evidence: ContentEvidence | null;
  /** The org's learning state the check was scored with. */
  learning: OrgLearning;
  /** The beacon session the form's `_fs_signals` field proved (a valid token of this org). */
  beaconSession: { projectId: string; sessionId: string } | null;
}

/**
 * Scores a form submission (the whole of POST /v1/check but the charge). `test`: a test key's, which
 * reads its org's test scope (records.ts scopedId): the test sessions its beacon field proves and
 * the org model its test feedback trained.
 * @throws ApiError MISSING_REQUIRED_DATA (nothing to analyse).
 */
export async function checkSubmission(deps: Deps, orgId: string, body: CheckBody, nowMs: number, test = false): Promise<CheckOutcome> {
  const md = body.metadata ?? {};
  const { beaconField, fields } = splitBeaconField(body.form_data);
  const hasForm = fields !== null && Object.values(fields).some((v) => v !== null && v !== "" && !(Array.isArray(v) && v.length === 0));
  if (md.email === undefined && md.ip === undefined && !hasForm && beaconField === null) {
    throw new ApiError("MISSING_REQUIRED_DATA", "Nothing to analyse: give at least one of metadata.email, metadata.ip or form_data.");
  }

  // IP: the datasets, inline (sub-microsecond).
  // The address was parsed by the body's schema (schemas/ip.ts, bodyIp).
  const dataset = deps.ipDatasets.get();
  const ip: ParsedIp | null = md.ip !== undefined ? md.ip.parsed : null;
  const facts = ip !== null ? dataset.lookup(ip) : null;

  // Text of the form, for the content model (below).
  const text = fields ? formText(fields) : { text: "", fields: [], flags: [] };

  // User agent.
  const ua = md.user_agent !== undefined ? uaClassifierFor(dataset).classify(md.user_agent) : null;

  // The beacon's field: token verified, its session's latest observation folded in.
  const proved = beaconField !== null ? beaconEvidence(deps, orgId, test, beaconField, nowMs) : null;
  const beacon = proved instanceof Promise ? await proved : proved;

  // The org's own model and history setting (one Map lookup; read over the pool the first time on
  // a cluster node): the text's evidence is wanted when the org keeps it or has a model to score it with.
  const cached = deps.learning.get(orgId);
  let learning = cached instanceof Promise ? await cached : cached;
  if (test) learning = await testLearning(deps, orgId, learning);
  const wantEvidence = learning.scorer !== null || learning.history.mode !== "none";

  // Asynchronous parts, in parallel: the content model (on the pool), the MX lookup for the
  // email, the challenge's spend.
  const [read, emailed, challenge] = await Promise.all([
    text.text.length === 0 ? Promise.resolve(null) : wantEvidence ? deps.content.analyzeWithEvidence(text.text) : deps.content.analyze(text.text).then((analysis) => ({ analysis, evidence: null })),
    // A test key's MX lookup is on its org's DNS budget (front/test-mode-budget.ts).
    md.email !== undefined ? analyzeEmailWithMx(deps.email, md.email, test ? deps.testMode.dns(orgId, nowMs) : undefined) : Promise.resolve(null),
    md.captcha_token !== undefined ? verifyChallengeToken(deps.challenge, orgId, md.captcha_token, nowMs) : Promise.resolve(null),
  ]);
  const email = emailed ? toCheckEmailSignals(emailed.analysis) : null;
  const evidence = read?.evidence ?? null;
  // An org with a model of its own: its probability replaces the global model's.
  const orgModel = learning.scorer !== null && evidence !== null ? learning.scorer : null;
  const content = read === null ? null : orgModel ? { ...read.analysis, spam_probability: round(orgModel.probability(evidence!)) } : read.analysis;

  const loadedAt = md.form_loaded_at === undefined ? null : md.form_loaded_at < 1e11 ? md.form_loaded_at * 1000 : md.form_loaded_at;
  const input: CheckInput = {
    content: content ? { spam_probability: content.spam_probability, fraud: content.fraud, cold_email: content.cold_email, chars: text.text.length } : null,
    email: email ? { reasons: email.reasons } : null,
    ip: facts ? { datacenter: facts.type.datacenter || facts.type.hosting || facts.type.cloud, vpn: facts.risk.vpn, proxy: facts.risk.proxy || facts.risk.tor || facts.risk.residential_proxy, scanner: facts.risk.scanner } : null,
    honeypotFilled: md.honeypot_field === undefined ? null : md.honeypot_field.trim() !== "",
    elapsedMs: loadedAt === null ? null : nowMs - loadedAt,
    ua: ua ? { present: md.user_agent!.trim() !== "", automation: ua.automation, bot: ua.bot !== null, client: ua.client } : null,
    challenge: challenge ? { valid: challenge.valid, reason: challenge.reason } : null,
    beacon: beacon ? beacon.evidence : null,
  };
  const fused = fuseCheck(input, orgModel ? orgModel.version : 0);
  const data = answerOf(deps, fused, input, facts, email, content, text.fields, text.flags, orgModel ? orgModel.version : 0);
  return { data, input, fused, ip, facts, email: emailed ? emailed.analysis : null, mxCache: emailed ? emailed.mxCache : null, fields, text, content, evidence, learning, beaconSession: beacon ? beacon.session : null };
}

/** `data` of POST /v1/check (its schema: checkResponse). */
export type CheckAnswer = ReturnType<typeof answerOf>;

/** The answer of a check from its fusion and signals (exported for bench/micro/answers.bench.ts). */
export function answerOf(deps: Deps, fused: CheckResult, input: CheckInput, facts: IpFacts | null, email: CheckEmailSignals | null, content: ContentAnalysis | null, fields: string[], fieldFlags: readonly string[] = [], orgModel = 0) {
  let ipRisk = 0;
  for (const m of fused.rule_matches) if (m.signal === "ip") ipRisk += m.contribution;
  return {
    score: fused.score,
    confidence: fused.confidence,
    decision: fused.decision,
    categories: fused.categories,
    signals: {
      ip: facts
        ? { risk: round(1 / (1 + Math.exp(-(Math.log(0.05 / 0.95) + ipRisk)))), country_code: facts.country, is_vpn: facts.risk.vpn, is_datacenter: input.ip!.datacenter }
        : null,
      email: email ? { risk: email.risk, disposable: email.disposable, domain: email.domain } : null,
      content: content
        ? { risk: round(content.spam_probability), spam_probability: round(content.spam_probability), language: content.language, flags: mergeFlags(content.flags, fieldFlags), fields }
        : null,
    },
    rule_matches: fused.rule_matches,
    fusion: { method: FUSION_METHOD, model_version: `content:${deps.content.version}${orgModel > 0 ? `+org:${orgModel}` : ""}+fusion:1` },
  };
}

/**
 * JSON.stringify(answer), written by hand: the answer's shape is fixed, and its text costs about
 * two thirds of what JSON.stringify of the object does, a notable share of the check's front-thread
 * CPU (bench/micro/answers.bench.ts). Text that callers or the dataset supply goes through
 * JSON.stringify; enum values and rule names are written as they are. Identical output, checked
 * against JSON.stringify by test/unit/answer-json.test.ts.
 */
export function checkAnswerJson(a: CheckAnswer): string {
  const { categories: c, signals: s } = a;
  let out = `{"score":${num(a.score)},"confidence":${num(a.confidence)},"decision":"${a.decision}","categories":{"spam":${num(c.spam)},"fraud":${num(c.fraud)},"cold_email":${num(c.cold_email)}},"signals":{"ip":`;
  const { ip, email, content } = s;
  out += ip ? `{"risk":${num(ip.risk)},"country_code":${JSON.stringify(ip.country_code)},"is_vpn":${ip.is_vpn},"is_datacenter":${ip.is_datacenter}}` : "null";
  out += email ? `,"email":{"risk":${num(email.risk)},"disposable":${email.disposable},"domain":${JSON.stringify(email.domain)}}` : ',"email":null';
  out += content
    ? `,"content":{"risk":${num(content.risk)},"spam_probability":${num(content.spam_probability)},"language":${JSON.stringify(content.language)},"flags":${JSON.stringify(content.flags)},"fields":${JSON.stringify(content.fields)}}},"rule_matches":[`
    : ',"content":null},"rule_matches":[';
  const matches = a.rule_matches;
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i]!;
    out += `${i === 0 ? "" : ","}{"rule":"${m.rule}","signal":"${m.signal}","contribution":${num(m.contribution)}${m.detail === undefined ? "}" : `,"detail":${JSON.stringify(m.detail)}}`}`;
  }
  return `${out}],"fusion":${fusionJson(a.fusion)}}`;
}

/** The `fusion` block's JSON, kept for the model version it was made for (one per loaded model). */
let fusionCache: { version: string; json: string } | null = null;

function fusionJson(f: CheckAnswer["fusion"]): string {
  if (f.method !== FUSION_METHOD) return JSON.stringify(f);
  let cached = fusionCache;
  if (cached === null || cached.version !== f.model_version) fusionCache = cached = { version: f.model_version, json: JSON.stringify(f) };
  return cached.json;
}

/** The text's flags plus those raised by single fields (a field that is only a link), in FLAGS order. */
function mergeFlags(fromText: readonly string[], fromFields: readonly string[]): string[] {
  if (fromText.length === 0 && fromFields.length === 0) return [];
  const all = new Set([...fromText, ...fromFields]);
  return FLAGS.filter((f) => all.has(f));
}

/**
 * What the history keeps of a check answered to `principal`: a live key's in its org's history; a
 * test key's (charged nothing) in the org's test scope (records.ts scopedId), up to
 * FS_TEST_HISTORY_PER_DAY of them per org and UTC day.
 */
export function keptHistory(deps: Pick<Deps, "testHistory">, principal: KeyPrincipal, o: CheckOutcome, requestId: string, formId: string, nowMs: number): CheckHistoryRecord | undefined {
  if (!isTestPrincipal(principal)) return historyRecord(o, principal.orgId, requestId, formId, nowMs);
  const r = historyRecord(o, dataScope(principal, principal.orgId), requestId, formId, nowMs);
  return r && deps.testHistory.take(principal.orgId, nowMs) ? r : undefined;
}

/**
 * What the org's history keeps of a check (null when it keeps nothing): the verdict, and the
 * text's evidence or the text itself, as the org's setting says (docs/api.md, "Check history").
 */
export function historyRecord(o: CheckOutcome, orgId: string, requestId: string, formId: string, nowMs: number): CheckHistoryRecord | undefined {
  const mode = o.learning.history.mode;
  if (mode === "none") return undefined;
  const { data } = o;
  return {
    request_id: requestId,
    org_id: orgId,
    ts: nowMs,
    form_id: formId,
    score: data.score,
    decision: data.decision,
    spam_probability: o.content ? o.content.spam_probability : null,
    language: o.content ? o.content.language : null,
    flags: data.signals.content ? data.signals.content.flags : [],
    org_model: o.evidence !== null && o.learning.scorer !== null ? o.learning.scorer.version : 0,
    email_domain: data.signals.email ? data.signals.email.domain : null,
    evidence: o.evidence,
    text: mode === "text" && o.text.text.length > 0 ? o.text.text : null,
  };
}

/**
 * What a test key's check runs with: the model its org's test scope learned from test feedback
 * (records.ts scopedId; none until a test key gave feedback), and the org's own history setting.
 */
async function testLearning(deps: Deps, orgId: string, live: OrgLearning): Promise<OrgLearning> {
  const own = await deps.learning.get(scopedId(orgId, true));
  return { ...own, history: live.history };
}

/** Separates the beacon's hidden field from the site's own fields. */
type FormData = NonNullable<CheckBody["form_data"]>;

function splitBeaconField(formData: CheckBody["form_data"]): { beaconField: string | null; fields: FormData | null } {
  if (!formData) return { beaconField: null, fields: null };
  const raw = formData[BEACON_FIELD];
  if (typeof raw !== "string") return { beaconField: null, fields: formData };
  const { [BEACON_FIELD]: _, ...rest } = formData;
  return { beaconField: raw, fields: rest };
}

type BeaconEvidence = { evidence: NonNullable<CheckInput["beacon"]>; session: CheckOutcome["beaconSession"] };

/**
 * What the beacon's field proves: a valid handshake token of one of this org's projects, issued to
 * a key of the caller's mode (`test`; a token of the other mode proves nothing), the
 * client's strong automation tells, and the session's latest observation (its score). Read at
 * once on LMDB; on a cluster node the project (if not cached) and the session over the pool.
 */
function beaconEvidence(deps: Deps, orgId: string, test: boolean, field: string, nowMs: number): BeaconEvidence | Promise<BeaconEvidence> {
  const parsed = parseField(field);
  const tells = Array.isArray(parsed?.signals?.tells) ? (parsed!.signals!.tells as unknown[]).filter((t): t is string => typeof t === "string") : [];
  const strongTells = tells.some((t) => STRONG_TELLS.has(t));
  const proved = typeof parsed?.token === "string" ? deps.beacon.tokens.inspect(parsed.token, nowMs) : null;
  const answer = (project: ProjectRecord | undefined, session: SessionRecord | undefined): BeaconEvidence =>
    !proved || !project || project.org_id !== orgId
      ? { evidence: { tokenValid: false, strongTells, verdictScore: null }, session: null }
      : { evidence: { tokenValid: true, strongTells, verdictScore: session ? session.last.score : null }, session: { projectId: proved.projectId, sessionId: proved.sessionId } };
  // The token's project id is scoped for a test key's session (records.ts scopedId).
  const scope = proved ? splitScopedId(proved.projectId) : null;
  if (!proved || scope!.test !== test) return answer(undefined, undefined);
  const local = deps.reads.local;
  if (local) {
    const project = deps.beacon.projects.get(scope!.id);
    return answer(project, project?.org_id === orgId ? local.sessions.get([proved.projectId, proved.sessionId]) : undefined);
  }
  return (async () => {
    const project = await withStore(() => deps.beacon.projects.get(scope!.id));
    return answer(project, project?.org_id === orgId ? await deps.reads.get("sessions", [proved.projectId, proved.sessionId]) : undefined);
  })();
}

interface BeaconField {
  token?: unknown;
  session_id?: unknown;
  signals?: { tells?: unknown };
}

function parseField(text: string): BeaconField | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null ? (v as BeaconField) : null;
  } catch {
    return null;
  }
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
