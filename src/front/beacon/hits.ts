import type { IpDataset } from "../../datasets/ip-dataset.js";
import { headerTells } from "./header-tells.js";
import { cleanLine } from "../../shared/text.js";
import { hostnameMatchesMask, type RdnsResolver } from "../../datasets/rdns.js";
import { createUaClassifier, type UaClassifier, type UaInfo } from "../../datasets/ua.js";
import { resolvePolicy, type BotPolicy } from "../../scoring/bot-policy.js";
import { needsRdns, scoreHit, type HitBot, type HitInput, type ScoredHit } from "../../scoring/observation.js";
import { formatIp } from "../../shared/ip.js";
import { sequentialId } from "../../shared/ids.js";
import type { ObservationKind, ObservationRecord, ProjectRecord } from "../../store/records.js";
import type { ObservationJournal } from "../../store/observation-journal.js";
import { JournalClosedError } from "../../store/journal.js";
import type { TrustedProxies } from "../client-address.js";
import type { IpDatasetHolder } from "../../datasets/holder.js";
import { ApiError } from "../../shared/errors.js";
import { dataScope, isTestPrincipal, type KeyPrincipal } from "../auth.js";
import type { RequestSnapshot } from "../../http/request.js";
import { RawJson } from "../../http/respond.js";
import type { RouteResult } from "../../http/route.js";
import type { HitBody } from "../../http/schemas/beacon.js";
import { originAllowed, type ProjectDirectory } from "../projects.js";
import { SESSION_ID, newSessionId, type BeaconTokens } from "./token.js";
import type { BeaconRateLimits } from "./limits.js";
import type { BeaconBudget } from "./budget.js";
import type { BlockNotifier } from "../webhook-blocks.js";

export interface BeaconServices {
  projects: ProjectDirectory;
  tokens: BeaconTokens;
  trusted: TrustedProxies;
  ipDatasets: IpDatasetHolder;
  rdns: RdnsResolver;
  journal: ObservationJournal;
  /** Rate limits of the beacon's writes, per client address and per project (limits.ts). */
  limits: BeaconRateLimits;
  /** Observations recorded per org, project and address prefix and day (budget.ts). */
  budget: BeaconBudget;
  /** session.blocked webhook events, sent before a block answer (front/webhook-blocks.ts). */
  blocks: BlockNotifier;
  /**
   * How long after it expired a token still proves its session (FS_OBSERVATION_RETENTION_DAYS:
   * after that the session itself is gone): a returning visitor's handshake continues it.
   */
  sessionProofMs: number;
}

/** UA classifiers per dataset build: the bot registry ships with the IP build and switches with it. */
const uaClassifiers = new WeakMap<IpDataset, UaClassifier>();

export function uaClassifierFor(dataset: IpDataset): UaClassifier {
  let c = uaClassifiers.get(dataset);
  if (!c) {
    c = createUaClassifier(dataset.bots);
    uaClassifiers.set(dataset, c);
  }
  return c;
}

/** Resolved policies, recomputed only when a project's stored document changes. */
const policies = new WeakMap<object, BotPolicy>();
const DEFAULT_POLICY = resolvePolicy(null);

function policyOf(project: ProjectRecord): BotPolicy {
  const doc = project.bot_policy;
  if (!doc) return DEFAULT_POLICY;
  let p = policies.get(doc);
  if (!p) {
    p = resolvePolicy(doc);
    policies.set(doc, p);
  }
  return p;
}

/**
 * The project of a publishable key, checked against the page's origin. `write`: a call that
 * records or issues something (a POST), which a project that lists its origins takes only from
 * a browser page of one of them, so with an Origin header (browsers send it with every POST).
 * @throws ApiError FORBIDDEN (key without a project), ORIGIN_NOT_ALLOWED.
 */
export function beaconProject(services: BeaconServices, principal: KeyPrincipal, origin: string, write = false): ProjectRecord {
  const id = principal.key.project_id;
  const project = id ? services.projects.get(id) : undefined;
  if (!project) throw new ApiError("FORBIDDEN", "This publishable key is not bound to a project.");
  if (!originAllowed(project, origin)) {
    throw new ApiError("ORIGIN_NOT_ALLOWED", `Origin ${origin} is not in this project's allowed_origins.`);
  }
  if (write && !origin && project.allowed_origins?.length) {
    throw new ApiError(
      "ORIGIN_NOT_ALLOWED",
      "This project lists its allowed_origins, and this call has no Origin header: beacon calls come from the project's pages. Server-side callers use a secret key (POST /v1/check).",
    );
  }
  return project;
}

/**
 * What the beacon's writes check before their body is read (Route.admit): the key's project,
 * the page's origin, and the rate limits of the client address and the project.
 * @throws ApiError FORBIDDEN, ORIGIN_NOT_ALLOWED, RATE_LIMITED.
 */
export function admitBeaconWrite(services: BeaconServices, principal: KeyPrincipal, snap: RequestSnapshot, nowMs: number): void {
  const project = beaconProject(services, principal, snap.origin, true);
  // Today's budget counts from the store, where the call can still wait for them (a cluster node).
  services.budget.warm(project.org_id, project.id, nowMs);
  services.limits.admit(project.id, services.trusted.clientIp(snap.peer, snap.forwardedFor), nowMs);
}

/**
 * The session a hit or a handshake continues in `scope` (the project's id, or its test scope for a
 * test key): the one its token (even an expired one, within
 * `sessionProofMs`) was issued for, when the call names no other; else null, and it starts a new
 * one. A session id alone proves nothing: it is passed to the site's backend and shown in
 * answers and listings, so whoever saw it could otherwise file hits in someone else's session.
 */
export function provenSession(services: BeaconServices, scope: string, token: string | undefined, claimed: string | undefined, nowMs: number): string | null {
  if (!token) return null;
  const proved = services.tokens.provenSession(token, scope, nowMs, services.sessionProofMs);
  return proved !== null && (claimed === undefined || claimed === proved) ? proved : null;
}

/**
 * Scores one beacon hit and records it as an observation. The answer goes out once
 * the observation is in the observation journal (so it survives a crash); the writer stores it
 * in LMDB shortly after. Synchronous up to the journal write, except for a bot whose operator
 * is verified by reverse DNS (a cached lookup).
 */
export function recordHit(
  services: BeaconServices,
  principal: KeyPrincipal,
  snap: RequestSnapshot,
  body: HitBody,
  kind: ObservationKind,
  nowMs: number,
): Promise<RouteResult> {
  const project = beaconProject(services, principal, snap.origin, true);
  if (body.kind !== undefined && body.kind !== kind) {
    throw new ApiError("VALIDATION_ERROR", `body.kind: this endpoint records ${kind} hits.`);
  }
  // A test key's hits go to its project's test scope (records.ts scopedId): tokens, sessions and
  // observations of one mode are unknown to the other.
  const scope = dataScope(principal, project.id);
  const tokenSession = body.token ? services.tokens.verify(body.token, scope, nowMs) : null;
  const claimed = body.session_id !== undefined && SESSION_ID.test(body.session_id) ? body.session_id : null;
  // A token is valid for the session it was issued to; a hit claiming another session is not vouched for.
  const tokenValid = tokenSession !== null && (claimed === null || claimed === tokenSession);
  // Filed in the session its token proves, when it names no other (an expired token still proves
  // it: a page left open past the token's lifetime); otherwise in a session of its own, which the
  // answer names.
  const sessionId = tokenValid ? tokenSession : (provenSession(services, scope, body.token, claimed ?? undefined, nowMs) ?? newSessionId());
  // Past the day's budget the hit is still scored and its session updated (the verdicts, the
  // session.blocked event); only the full observation is not stored (budget.ts).
  const ip = services.trusted.clientIp(snap.peer, snap.forwardedFor);
  const recorded = services.budget.take(project.org_id, project.id, ip, nowMs);
  const dataset = services.ipDatasets.get();
  const facts = ip ? dataset.lookup(ip) : null;
  const ua = uaClassifierFor(dataset).classify(snap.userAgent);
  const view = uaViewOf(ua);
  const signals = body.signals;
  const input: HitInput = {
    ua: view.parts,
    automationUa: ua.automation,
    bot: view.bot,
    clientUa: ua.client,
    ip: facts,
    tokenValid,
    // The page's tells plus what the request's own headers and timing show (header-tells.ts).
    tells: [
      ...(signals?.tells ?? []),
      ...(snap.client ? headerTells({ userAgent: snap.userAgent, ...snap.client }) : []),
      ...(tokenValid && timingMismatch(services.tokens.ageMs(body.token!, nowMs), signals?.timing?.elapsed_ms) ? ["timing_mismatch"] : []),
    ],
    clientUaMismatch: signals?.ua !== undefined && snap.userAgent !== "" && signals.ua !== snap.userAgent,
    rdnsVerified: null,
  };
  const finish = (): Promise<RouteResult> => {
    const scored = scoreHit(input, policyOf(project));
    // Handed to the journal as it is (appendOwned): `seq` first, assigned there.
    const rec: ObservationRecord = {
      seq: 0,
      id: sequentialId("obs"),
      org_id: project.org_id,
      project_id: scope,
      session_id: sessionId,
      kind,
      action: body.action ?? (kind === "page.view" ? "pageview" : "submit"),
      ts: nowMs,
      score: scored.score,
      decision: scored.decision,
      reasons: scored.reasons,
      ua: storedUa(view, scored.ua),
      bot_id: scored.bot_id,
      bot_operator: scored.bot_operator,
      bot_verified: scored.bot_verified,
      policy: scored.policy,
      dry_run: scored.dry_run,
      ip: ip ? formatIp(ip) : null,
      country: facts?.country ?? null,
      page: body.page ? pathOnly(body.page) : null,
      fingerprint: signals?.fp ?? null,
      token_valid: tokenValid,
      tells: input.tells,
    };
    if (!recorded) rec.unrecorded = true;
    return new Promise((resolve, reject) => {
      try {
        services.journal.appendOwned(rec, (err) => {
          if (err) return reject(notRecorded());
          const answer: RouteResult = { data: hitAnswerJson(rec.id, sessionId), credits: 0, neverBlock: true };
          if (scored.decision !== "block") return resolve(answer);
          const livemode = !isTestPrincipal(principal);
          const block = { orgId: project.org_id, projectId: project.id, type: "session.blocked" as const, subject: sessionId, reasons: scored.reasons, livemode, nowMs };
          services.blocks.blocked(block).then(() => resolve(answer), reject);
        });
      } catch (err) {
        reject(err instanceof JournalClosedError ? notRecorded() : err);
      }
    });
  };
  if (input.bot && ip && needsRdns(input.bot, facts)) {
    const masks = input.bot.rdns_masks;
    return services.rdns.lookup(formatIp(ip)).then((r) => {
      if (r.hostname !== null && r.verified !== null) input.rdnsVerified = r.verified && hostnameMatchesMask(r.hostname, masks);
      else if (r.resolved) input.rdnsVerified = false; // no PTR record: cannot be the operator's crawler
      return finish();
    });
  }
  return finish();
}

function botOf(ua: UaInfo): HitInput["bot"] {
  const b = ua.bot;
  if (!b) return null;
  return {
    bot_id: b.bot_id,
    bot_name: b.bot_name,
    bot_operator: b.bot_operator,
    bot_kind: b.bot_kind,
    range_ids: b.verification.range_ids,
    rdns_masks: b.verification.rdns_masks,
  };
}

/**
 * `location.pathname` only: a query or fragment (which may hold personal data) is cut off, and
 * control, bidi and lone-surrogate characters are removed (the page is stored and listed).
 */
function pathOnly(page: string): string {
  const cut = page.search(/[?#]/);
  return cleanLine((cut < 0 ? page : page.slice(0, cut)).slice(0, 512));
}

/** How much older than the page a handshake may look (clock granularity, a slow first byte). */
const TIMING_SLACK_MS = 3000;

/**
 * `timing_mismatch`: the hit's handshake was issued longer ago than the page it claims to come
 * from has existed (`signals.timing.elapsed_ms`, the page's own clock). The beacon handshakes on
 * every page load, so a real hit cannot be older than its page: a hit assembled from a token and
 * signals replayed or made up outside the page.
 */
export function timingMismatch(tokenAgeMs: number | null, elapsedMs: number | undefined): boolean {
  return tokenAgeMs !== null && elapsedMs !== undefined && tokenAgeMs > elapsedMs + TIMING_SLACK_MS;
}

/**
 * What a hit takes from its classified UA, made once per UaInfo (the classifier hands out the same
 * frozen object for every call with that UA while it is cached): the parts and bot for the
 * scoring (shared, read only), and the parts as stored, cleaned with cleanLine because they come
 * from a header the client chose and are stored and listed.
 */
export interface UaView {
  parts: HitInput["ua"];
  bot: HitBot | null;
  clean: { browser: string | null; os: string | null; device: string | null; bot_name: string | null };
}

const uaViews = new WeakMap<UaInfo, UaView>();

export function uaViewOf(ua: UaInfo): UaView {
  let v = uaViews.get(ua);
  if (v === undefined) {
    const bot = botOf(ua);
    const clean = (s: string | null) => (s === null ? null : cleanLine(s));
    v = {
      parts: { browser: ua.browser, os: ua.os, device: ua.device },
      bot,
      clean: { browser: clean(ua.browser), os: clean(ua.os), device: clean(ua.device), bot_name: bot === null ? null : clean(bot.bot_name) },
    };
    uaViews.set(ua, v);
  }
  return v;
}

/**
 * The observation's `ua` field: the scored UA of the hit whose view this is, with its parts
 * cleaned. scoreHit copies browser, os and device from the view's parts and names the view's bot
 * or none (an automation visit), so the cleaned text is the view's.
 */
export function storedUa(view: UaView, scored: ScoredHit["ua"]): ObservationRecord["ua"] {
  const c = view.clean;
  return { browser: c.browser, os: c.os, device: c.device, bot_kind: scored.bot_kind, bot_name: scored.bot_name === null ? null : c.bot_name };
}

/** Ids that need no escaping in JSON: base62 with the prefixes' underscores. */
const PLAIN_ID = /^[0-9A-Za-z_]*$/;

/**
 * The answer of a recorded hit, `{observation_id, session_id}`, as JSON.stringify writes it. Both
 * ids are base62 with a prefix (sequentialId, SESSION_ID), so the text is put together directly
 * and the router appends the credits to the envelope as text (renderData's quick path).
 */
export function hitAnswerJson(observationId: string, sessionId: string): RawJson {
  if (!PLAIN_ID.test(observationId) || !PLAIN_ID.test(sessionId)) return new RawJson(JSON.stringify({ observation_id: observationId, session_id: sessionId }));
  return new RawJson(`{"observation_id":"${observationId}","session_id":"${sessionId}"}`);
}

function notRecorded(): ApiError {
  return new ApiError("NOT_READY", "The observation could not be recorded right now (the service is stopping or storage failed); retry shortly.", {
    headers: { "retry-after": "1" },
  });
}
