import type { HttpResponse } from "uWebSockets.js";
import type { Logger } from "../shared/log.js";
import type { AuthRequirement, Authenticator, KeyPrincipal } from "../front/auth.js";
import { isJsonContentType, parseJson, readBody, type BodyIntake, type BodyOwner } from "./body.js";
import { beginWait, endWait, mayWait, StoreWait } from "../store/store-wait.js";
import { ApiError } from "../shared/errors.js";
import { toApiError } from "./to-api-error.js";
import { countCredits } from "../front/counters.js";
import { IdempotencyKeys } from "../front/idempotency.js";
import type { QuotaGate } from "../front/quota.js";
import type { TestModeBudget } from "../front/test-mode-budget.js";
import type { TrustedProxies } from "../front/client-address.js";
import type { RequestSnapshot } from "./request.js";
import type { Scope } from "../shared/api-keys.js";
import { elapsedMs, RawJson, RawText, renderData, writeData, writeError, writeHead, writeJsonText, writeRawText, writeRendered, type ResponseState } from "./respond.js";
import type { Method, Route, RouteContext, RouteResult } from "./route.js";
import { inputsOf, type RouteInputs } from "./inputs.js";
import { validate } from "./validate.js";

/**
 * The request pipeline, the only caller of a route's handler: authenticate, check the caller's
 * capabilities, admit (route.admit), read and validate the inputs and body, hold, handle, charge,
 * answer. Two entries: `handle` for a request uWS handed to the router (router.ts mounts the
 * routes), and `callRoute` for a call made in-process (the dashboard's pages and actions, tests).
 */

/** What the pipeline needs besides the routes (the router's uWS entry and the in-process entry). */
export interface RouterDeps {
  auth: Authenticator;
  /** Caps the body bytes held across connections (public and keyed routes apart) and cuts slow bodies. */
  bodies: BodyIntake;
  quota: QuotaGate;
  /** Test-mode keys' calls of the metered routes, counted instead of held (FS_TEST_MODE_*). */
  testMode: TestModeBudget;
  /** Idempotency-Key answers (POST routes with a secret key or the admin token). */
  idempotency: IdempotencyKeys | null;
  log: Logger;
  maxBodyBytes: number;
  /** When true, X-FS-Test-Now (epoch ms) replaces the wall clock for this request. */
  testClock: boolean;
  /** Proxies whose X-Forwarded-For is read (beacon routes: the client address). */
  trusted: TrustedProxies;
}

export const HTTP_NAME: Record<Method, string> = { get: "GET", post: "POST", patch: "PATCH", put: "PUT", del: "DELETE" };

/**
 * One request on its way through the pipeline (handle -> run -> answer, failRequest), passed
 * along whole instead of positional arguments. Made once per request with every field set, so
 * all calls share one shape.
 */
export interface Call {
  route: Route<any>;
  /** The route's path and query readers (inputs.ts). */
  inputs: RouteInputs;
  res: HttpResponse;
  state: ResponseState;
  snap: RequestSnapshot;
  deps: RouterDeps;
  /** Set by authentication (secret and publishable routes). */
  principal: KeyPrincipal | null;
  /** The request's clock (clockFor), set when the pipeline starts. */
  nowMs: number;
  /** ctx.params and ctx.query, set once validated. */
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

export const NO_INPUTS: Record<string, unknown> = Object.freeze({});

export function newCall(route: Route<any>, inputs: RouteInputs, res: HttpResponse, state: ResponseState, snap: RequestSnapshot, deps: RouterDeps): Call {
  return { route, inputs, res, state, snap, deps, principal: null, nowMs: 0, params: NO_INPUTS, query: NO_INPUTS };
}

/**
 * The request pipeline: authenticate, read and validate the body, run, charge, answer.
 * Synchronous until something is really asynchronous (a body to read, an async handler, the
 * journal write): most metered GETs allocate no promise on the way.
 */
export function handle(c: Call): void {
  const { route, state, snap, deps } = c;
  try {
    c.principal = null;
    c.nowMs = clockFor(snap, deps.testClock);
    const need = route.auth;
    if (need.kind === "admin") deps.auth.verifyAdmin(snap.authorization, need.orTokenHash);
    else if (need.kind === "secret" || need.kind === "publishable") {
      // The key, and the org's standing, before anything is done: on a cluster node either may
      // have to be read first (StoreWait), and the request starts again then.
      beginWait();
      try {
        c.principal = deps.auth.verifyKey(snap.authorization, need, c.nowMs);
        if (need.kind === "secret") authorize(need, c.principal);
        deps.quota.prepare(c.principal.orgId, c.nowMs);
      } finally {
        endWait();
      }
    }
    route.admit?.(snap, c.principal, c.nowMs);
    // Path and query by the route's schemas (inputs.ts), before a byte of the body is read or held.
    c.params = c.inputs.params(snap.params);
    c.query = c.inputs.query(snap.query);

    if (route.rawBody) {
      // Checks that need no body (is the endpoint configured, is the signature header well
      // formed) answer before a byte of it is read or held.
      route.rawBody.precheck?.(snap);
      bodyOf(c, c.principal).then(
        (raw) => {
          try {
            run(c, raw);
          } catch (err) {
            failRequest(c, err);
          }
        },
        (err: unknown) => failRequest(c, err),
      );
      return;
    }
    if (!route.body) return withBody(c, undefined);
    if (!isJsonContentType(snap.contentType)) {
      throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as JSON with 'Content-Type: application/json'.");
    }
    bodyOf(c, c.principal).then(
      (raw) => withBody(c, raw),
      (err: unknown) => failRequest(c, err),
    );
  } catch (err) {
    if (err instanceof StoreWait) {
      // The key's record (or its org's) is read from the store first; the body meanwhile, as uWS
      // hands it over only now. Then the request starts again.
      if ((route.body || route.rawBody) && !state.body) {
        state.body = bodyOf(c, null);
        // Handled when the request starts again (its refusal answered then): not an unhandled
        // rejection meanwhile, which would end the process (a refused body, e.g. two Content-Lengths).
        state.body.catch(() => undefined);
      }
      return afterWait(err, state, () => handle(c), (e) => failRequest(c, e));
    }
    failRequest(c, err);
  }
}

/**
 * A route whose success is its `data` as is (`envelope: false`, router.ts mountUnwrapped): the
 * admin token when it needs one, its inputs, the handler, the RawJson or RawText answer.
 */
export function handleUnwrapped(c: Call): void {
  const { route, inputs, res, state, snap, deps } = c;
  const write = (result: RouteResult): void => {
    const status = result.status ?? 200;
    if (result.data instanceof RawJson) writeJsonText(res, state, status, result.data.json, result.headers);
    else if (result.data instanceof RawText) writeRawText(res, state, status, result.data, result.headers);
    else throw new Error(`route ${route.pattern}: envelope: false needs a RawJson or RawText answer`);
  };
  const fail = (err: unknown): void => failRequest(c, err);
  try {
    if (route.auth.kind === "admin") deps.auth.verifyAdmin(snap.authorization, route.auth.orTokenHash);
    const params = inputs.params(snap.params);
    const query = inputs.query(snap.query);
    const result = route.handle({ snap, body: undefined, params, query, principal: null, nowMs: Date.now(), requestId: snap.requestId, startedAt: state.startedAt });
    if (result instanceof Promise) {
      result.then((r) => {
        try {
          write(r);
        } catch (err) {
          fail(err);
        }
      }, fail);
    } else write(result);
  } catch (err) {
    fail(err);
  }
}

/**
 * An Idempotency-Key's stored answer, or the handler, once the body (if any) is in. On a cluster
 * node the key's answer may be read from the store first (StoreWait, before anything is
 * claimed); then from here again. A top-level function: the common path allocates no closure.
 */
function withBody(c: Call, raw: Buffer | undefined): void {
  try {
    if (c.snap.extra["idempotency-key"] && c.deps.idempotency && mayWait(() => replayed(c, raw))) return;
    run(c, raw === undefined ? undefined : validate(c.route.body!, parseJson(raw), "body"));
  } catch (err) {
    // Not once the key is claimed: its claim would find itself running.
    if (err instanceof StoreWait && !c.state.idem) return afterWait(err, c.state, () => withBody(c, raw), (e) => failRequest(c, e));
    failRequest(c, err);
  }
}

/**
 * The request's body: the one read while it waited for the store (from now on counted against
 * the share of the org its key turned out to have), or read now.
 */
function bodyOf(c: Call, principal: KeyPrincipal | null): Promise<Buffer> {
  const { route, res, state, snap, deps } = c;
  if (state.body && principal) {
    const owner = bodyOwner(route, snap, principal);
    if (owner.pool === "keyed") state.lease?.reown?.(owner.id);
  }
  return state.body ?? readBody(res, state, route.rawBody?.maxBytes ?? deps.maxBodyBytes, snap.contentLength, deps.bodies, bodyOwner(route, snap, principal));
}

/**
 * Waits a call gets before it is answered NOT_READY: a record or two, then grants of its org's
 * lease, which near the end of a quota shrink to a few credits each, shared by the calls waiting.
 */
const MAX_WAITS = 32;

/**
 * On a cluster node: `again` once the store gave what the call waited for (StoreWait), unless the
 * client left. The event loop serves other calls meanwhile.
 */
function afterWait(wait: StoreWait, state: ResponseState, again: () => void, fail: (err: unknown) => void): void {
  state.waits = (state.waits ?? 0) + 1;
  if (state.waits > MAX_WAITS) return fail(wait);
  void wait.ready.then(() => {
    if (!state.aborted) again();
  });
}

/**
 * A request with an Idempotency-Key (idempotency.ts): answers the stored answer of an earlier
 * identical request and returns true, or claims the key for this request (state.idem) and
 * returns false. Throws for a key in use or used for another request.
 */
function replayed(c: Call, raw: Buffer | undefined): boolean {
  const { route, res, state, snap, deps, principal, nowMs } = c;
  const key = snap.extra["idempotency-key"];
  if (!key || !deps.idempotency) return false;
  let path = route.pattern;
  for (const p of snap.params) path = path.replace(/:[A-Za-z]+/, encodeURIComponent(p));
  const fingerprint = IdempotencyKeys.fingerprint(HTTP_NAME[route.method], path, snap.query, raw);
  const claim = deps.idempotency.claim(principal ? principal.orgId : "admin", key, fingerprint, nowMs);
  if (claim.kind === "claimed") {
    state.idem = claim;
    return false;
  }
  const a = claim.answer;
  writeRendered(res, state, a.status, a.body, { ...state.cors, ...a.headers, "idempotent-replayed": "true" });
  return true;
}

/** Bodies of routes reached without a secret key count against the public pool, or the one their route names (Stripe's webhook). */
export function poolOf(route: Route<any>): BodyOwner["pool"] {
  if (route.auth.kind !== "none" && route.auth.kind !== "publishable") return "keyed";
  return route.rawBody?.pool ?? "public";
}

/**
 * Whose share a body counts against: the client's on public routes, the org's (or the admin's) on
 * the others; the key's own while its org is being read from the store (a cluster node, StoreWait).
 */
function bodyOwner(route: Route<any>, snap: RequestSnapshot, principal: KeyPrincipal | null): BodyOwner {
  const pool = poolOf(route);
  if (pool !== "keyed") return { pool, peer: snap.peer, forwardedFor: snap.forwardedFor };
  return { pool: "keyed", id: principal ? principal.orgId : route.auth.kind === "admin" ? "admin" : snap.authorization };
}

/** Runs the handler (sync or async) and hands its result on to be charged and answered. */
function run(c: Call, body: unknown): void {
  const { route, state, snap, deps, principal, nowMs } = c;
  // HEAD on a metered route: the key, its capability, the admission and the inputs were checked
  // as for GET; the lookup is neither run nor charged (a HEAD receives no answer to pay for).
  if (state.head === true && route.minCredits) return writeHead(c.res, state, 200);
  // Held, not just checked: concurrent calls see each other's credits before any does its work.
  // Test-mode keys touch no quota: nothing held, nothing charged (answer()); their calls are
  // counted against the org's test-mode budget instead, before the handler does anything.
  if (principal && route.minCredits) {
    if (principal.key.mode === "test") deps.testMode.admit(principal.orgId, nowMs);
    else if (!route.free?.({ params: c.params, body, snap })) {
      try {
        state.hold = deps.quota.hold(principal.orgId, route.minCredits, nowMs);
      } catch (err) {
        // More of the node's lease first (a cluster): then again from here.
        if (err instanceof StoreWait) return afterWait(err, state, () => tryRun(c, body), (e) => failRequest(c, e));
        throw err;
      }
    }
  }
  const ctx: RouteContext<unknown> = { snap, body, params: c.params, query: c.query, principal, nowMs, requestId: snap.requestId, startedAt: state.startedAt };
  if (state.idem) ctx.recordAnswer = answerRecorder(state, state.idem, nowMs);
  const pending = route.handle(ctx);
  if (pending instanceof Promise) {
    pending.then(
      (result) => {
        try {
          answer(c, result);
        } catch (err) {
          failRequest(c, err);
        }
      },
      (err: unknown) => failRequest(c, err),
    );
  } else answer(c, pending);
}

/** run() from a callback: its errors answered. */
function tryRun(c: Call, body: unknown): void {
  try {
    run(c, body);
  } catch (err) {
    failRequest(c, err);
  }
}

/** Charges what the result costs (answering once the debit is durable) and writes the envelope. */
function answer(c: Call, result: RouteResult): void {
  const { res, state, deps, principal, nowMs } = c;
  let metadata = result.metadata;
  let metadataJson = result.metadataJson;
  const status = result.status ?? 200;
  const headers = state.cors ? (result.headers ? { ...state.cors, ...result.headers } : state.cors) : result.headers;
  const idem = state.idem && status < 300 ? state.idem : null;
  if (principal && result.credits !== undefined) {
    // A test-mode key's call states that it cost nothing, and is not charged.
    const credits = principal.key.mode === "test" ? 0 : result.credits;
    if (state.aborted) {
      releaseHold(state, deps);
      releaseClaim(state, deps);
      return; // the client left before the work was charged: nothing to bill
    }
    // Already serialised data or metadata: the credits are appended as text (renderData's quick path).
    if (metadata === undefined && metadataJson !== undefined) metadataJson += `,"credits":${credits}`;
    else if (metadata === undefined && result.data instanceof RawJson) metadataJson = `"credits":${credits}`;
    else metadata = { ...metadata, credits };
    // A test key's check charges nothing but is journaled all the same: its history record rides on
    // the (0-credit) debit line, as a live check's does (kept in the org's test scope).
    if (credits > 0 || result.history !== undefined) {
      // Answered once the debit is in the journal; a refusal (429) throws here, before any debit.
      const hold = state.hold ?? null;
      state.hold = null; // charge() ends it, also when it throws (but for a wait: see below)
      const body = renderData(state, result.data, metadata, metadataJson);
      const stored = idem ? storedAnswer(idem, status, replayBody(state, result, body), headers, nowMs) : undefined;
      const orgId = principal.orgId;
      try {
        deps.quota.charge(
          orgId,
          credits,
          nowMs,
          result.neverBlock ?? false,
          // A charge that could not be recorded states that it cost nothing, as every other failure
          // of a metered route does (failRequest).
          (err, seq) => {
            if (err) {
              releaseClaim(state, deps);
              return writeError(res, state, err, { credits: 0 }, state.cors);
            }
            if (stored) deps.idempotency!.remember(stored, seq!);
            countCredits(state.route, deps.quota.planOf(orgId), credits);
            writeRendered(res, state, status, body, credits > 0 ? withRateLimit(c, headers, orgId) : headers);
          },
          hold,
          stored,
          // The charge counts only if the client is still there when it is written, after uWS has
          // seen the rest of what came with this request: a pipelined request behind an
          // asynchronous answer makes uWS close the connection, and this answer could never go out.
          state,
          result.history,
        );
      } catch (err) {
        if (!(err instanceof StoreWait)) throw err;
        // More of the node's lease first (a cluster): the hold stands; charged and answered then.
        state.hold = hold;
        afterWait(err, state, () => {
          try {
            answer(c, result);
          } catch (e) {
            failRequest(c, e);
          }
        }, (e) => failRequest(c, e));
      }
      return;
    }
  }
  releaseHold(state, deps); // nothing charged
  if (idem && result.recorded && state.recorded) {
    // Stored with the effect already (RouteContext.recordAnswer): sent as rendered then.
    deps.idempotency!.recorded(state.recorded.answer, result.recorded.seq);
    state.idem = null;
    writeRendered(res, state, state.recorded.status, state.recorded.body, headers);
    return;
  }
  if (idem) {
    // Answered once the answer is durable, so a retry after a crash finds it.
    const body = renderData(state, result.data, metadata, metadataJson);
    deps.idempotency!.store(storedAnswer(idem, status, replayBody(state, result, body), headers, nowMs), (err) => {
      if (err) writeError(res, state, new ApiError("NOT_READY", "The answer could not be recorded for its Idempotency-Key (stopping or storage failure); retry with the same key."), undefined, state.cors);
      else writeRendered(res, state, status, body, headers);
    });
    return;
  }
  writeData(res, state, status, result.data, metadata, metadataJson, headers);
}

/**
 * RouteContext.recordAnswer for a request that claimed `idem`: renders the answer to send and the
 * one to store (the replay form, when given) with the same metadata, and keeps both in `state`.
 */
function answerRecorder(state: ResponseState, idem: NonNullable<ResponseState["idem"]>, nowMs: number): NonNullable<RouteContext<unknown>["recordAnswer"]> {
  return (status, data, replay) => {
    const timing = { processing_time_ms: elapsedMs(state.startedAt) };
    const body = renderData(state, data, timing);
    const answer = storedAnswer(idem, status, replay === undefined ? body : renderData(state, replay, timing), state.cors, nowMs);
    state.recorded = { answer, status, body };
    return answer;
  };
}

/**
 * The body stored for a replay: the answer sent (`body`), or its RouteResult.replay form rendered
 * with the metadata the answer sent states (request_id, processing_time_ms and credits alike).
 */
function replayBody(state: ResponseState, result: RouteResult, body: string): string {
  if (result.replay === undefined) return body;
  const sent = (JSON.parse(body) as { metadata: Record<string, unknown> }).metadata;
  return renderData(state, result.replay, sent);
}

function storedAnswer(idem: NonNullable<ResponseState["idem"]>, status: number, body: string, headers: Record<string, string> | undefined, nowMs: number) {
  return { scope: idem.scope, key: idem.key, fingerprint: idem.fingerprint, status, body, headers: headers ?? {}, created_ms: nowMs };
}

/** Lets the Idempotency-Key of a request that stored no answer be used again. */
function releaseClaim(state: ResponseState, deps: RouterDeps): void {
  if (state.idem) deps.idempotency?.release(state.idem);
  state.idem = null;
}

/**
 * A metered answer's headers (credits charged) plus the org's quota standing (RateLimit-Policy,
 * RateLimit); beacon answers, never refused for quota, do not carry them.
 */
function withRateLimit(c: Call, headers: Record<string, string> | undefined, orgId: string): Record<string, string> | undefined {
  if (c.route.beacon) return headers;
  const rl = c.deps.quota.rateLimitHeaders(orgId, c.nowMs);
  return rl ? (headers ? { ...headers, ...rl } : rl) : headers;
}

/** Gives back the credits held for this call, if any are still held. */
function releaseHold(state: ResponseState, deps: RouterDeps): void {
  if (state.hold) deps.quota.release(state.hold);
  state.hold = null;
}

/** The central error answer: our errors as they are, anything else a logged, generic 500. */
export function failRequest(c: Call, err: unknown): void {
  const { route, res, state, deps } = c;
  releaseHold(state, deps); // a failed call is not charged
  releaseClaim(state, deps); // nor is its answer stored: a retry with the key runs again
  const apiErr = toApiError(err);
  if (apiErr.status >= 500 && apiErr.code === "INTERNAL_ERROR") {
    deps.log.error("request failed", { request_id: state.requestId, route: route.pattern, err: errorText(err) });
  }
  // Metered routes state what a failure charged: nothing (credits are stated in metadata).
  const cors = apiErr.code === "ORIGIN_NOT_ALLOWED" ? undefined : state.cors;
  writeError(res, state, apiErr, route.minCredits || route.beacon ? { credits: 0 } : undefined, cors);
}

/** Access-Control-Allow-Origin for a beacon route's caller (none without an Origin header). */
export function corsHeaders(origin: string): Record<string, string> | undefined {
  return origin ? { "access-control-allow-origin": origin, vary: "Origin" } : undefined;
}

function clockFor(snap: RequestSnapshot, testClock: boolean): number {
  if (testClock && snap.testNow) {
    const n = Number(snap.testNow);
    // Years 2000-9999 only: periods are YYYYMM.
    if (Number.isSafeInteger(n) && n >= 946_684_800_000 && n < 253_402_300_800_000) return n;
    throw new ApiError("VALIDATION_ERROR", "header.x-fs-test-now: must be epoch milliseconds between the years 2000 and 9999.");
  }
  return Date.now();
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ""}` : String(err);
}


/**
 * What a caller must hold beyond being a secret key of the org: a scope among its key's, and a
 * live-mode key (`live`: a test key is refused). A route states it in `auth` (a secret route's
 * AuthRequirement is one), a dashboard page or action in its table entry (dashboard/index.ts).
 */
export type Capability = { scope?: Scope; live?: true };

/**
 * The capability check: the caller (a verified key, or a dashboard session's key) holds what the
 * route or action needs, else 403 INSUFFICIENT_SCOPE, before anything else of the call is done.
 * A caller's capabilities are its key's type, mode, scopes and org, read from the principal.
 */
export function authorize(need: Capability, principal: KeyPrincipal): void {
  if (need.scope !== undefined && !principal.key.scopes.includes(need.scope)) {
    throw new ApiError("INSUFFICIENT_SCOPE", `This needs a secret key with the '${need.scope}' scope.`);
  }
  if (need.live === true && principal.key.mode === "test") {
    throw new ApiError("INSUFFICIENT_SCOPE", "This needs a live-mode secret key; a test key cannot do it.");
  }
}

/**
 * Replaces a handler when the app is mounted (front/server.ts mountApp), given the route's or
 * dashboard entry's `METHOD /path`: for tests that prove a refusal came before any handler code.
 */
export type HandlerWrap = <F extends (...args: any[]) => any>(label: string, fn: F, need: Need) => F;

/** What an entry of a table declares it needs: a route its `auth`, a dashboard page or action a signed-in session with a Capability. */
export type Need = AuthRequirement | ({ kind: "session" } & Capability);

/** The routes with each handler replaced by `wrap`'s (HandlerWrap). */
export function wrapHandlers(routes: Route<any>[], wrap: HandlerWrap): Route<any>[] {
  return routes.map((r) => ({ ...r, handle: wrap(`${HTTP_NAME[r.method]} ${r.pattern}`, r.handle.bind(r), r.auth) }));
}

/** A call made in-process (callRoute): the route's path parameters in order, its query string and body. */
export interface InProcessCall {
  params?: string[];
  query?: string;
  body?: unknown;
  nowMs: number;
  /**
   * An admin route called for the caller's own org: the caller has put its org id (and nothing
   * else) into the parameters that name an org, and checked that any other resource named belongs
   * to it. Admin routes are refused in-process without it.
   */
  ownOrg?: true;
}

/** The route's path and query readers, built once per route. */
const routeInputs = new WeakMap<Route<any>, RouteInputs>();

/**
 * The pipeline's in-process entry (the dashboard's pages and actions; tests): the same steps as a
 * request through the router, in the same order, with `principal` already authenticated (a
 * dashboard session's key, checked again on each request): capabilities (authorize), admission
 * (route.admit: e.g. FS_FEEDBACK_PER_MINUTE), path, query and body by the route's schemas, the
 * handler. A refusal throws the ApiError the HTTP path would answer with. Nothing called
 * in-process is metered: a route that holds or charges credits is refused.
 * @returns the answer's `data`
 */
export async function callRoute(route: Route<any>, principal: KeyPrincipal, call: InProcessCall): Promise<any> {
  const need: AuthRequirement = route.auth;
  if (need.kind === "admin") {
    if (!call.ownOrg) throw new Error(`in-process: ${route.pattern} is an admin route; call it for the caller's own org only`);
  } else if (need.kind !== "secret") {
    throw new Error(`in-process: ${route.pattern} is not a secret-key route`);
  } else authorize(need, principal);
  if (route.minCredits) throw new Error(`in-process: ${route.pattern} is metered`);
  const snap = inProcessSnapshot(call);
  // As the router does: an admin route's admission sees no key principal.
  const caller = need.kind === "secret" ? principal : null;
  route.admit?.(snap, caller, call.nowMs);
  let inputs = routeInputs.get(route);
  if (!inputs) routeInputs.set(route, (inputs = inputsOf(route)));
  const params = inputs.params(snap.params);
  const query = inputs.query(snap.query);
  const body = route.body ? validate(route.body, call.body, "body") : undefined;
  const result = await route.handle({ snap, body, params, query, principal, nowMs: call.nowMs, requestId: "", startedAt: performance.now() });
  if (result.credits) throw new Error(`in-process: ${route.pattern} charged ${result.credits} credits`);
  return result.data;
}

/** The snapshot of an in-process call: its parameters and query, no headers. */
function inProcessSnapshot(call: InProcessCall): RequestSnapshot {
  return {
    query: call.query ?? "",
    params: call.params ?? [],
    authorization: "",
    contentType: "",
    contentLength: "",
    idempotencyKeySent: false,
    requestId: "",
    testNow: "",
    origin: "",
    userAgent: "",
    forwardedFor: "",
    peer: "",
    ifNoneMatch: "",
    client: null,
    extra: {},
  };
}
