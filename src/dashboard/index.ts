import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import { parseKey } from "../shared/api-keys.js";
import type { KeyPrincipal } from "../front/auth.js";
import { readBody, type BodyOwner } from "../http/body.js";
import { recordAnswer } from "../front/metrics.js";
import type { AppDeps } from "../http/deps.js";
import { ApiError, STATUS_TEXT } from "../shared/errors.js";
import { toApiError } from "../http/to-api-error.js";
import { withStore } from "../store/store-wait.js";
import { acceptRequestId, declaredLength, forwardedFor, peerAddress } from "../http/request.js";
import type { ResponseState } from "../http/respond.js";
import { authorize, type Capability, type HandlerWrap } from "../http/pipeline.js";
import { dashboardRoutes, type ActionResult, type DashContext, type DashboardRoutes } from "./context.js";
import { webhookCreateAction, webhookDeleteAction, webhookRollAction, webhooksPage } from "./webhooks.js";
import { keyConfirmPage, keyCreateAction, keyDeleteAction, keyDisableAction, keyEnableAction, keyRollAction, keysPage } from "./keys.js";
import { errorPage, STYLESHEET, type Viewer } from "./layout.js";
import { loginPage, loginMessage } from "./login.js";
import { hitPage, observationsPage } from "./observations.js";
import { backOf, checkFeedbackAction, checkHistoryAction, checksPage, modelResetAction, modelResetConfirmPage } from "./checks.js";
import { checkoutAction, overviewPage, portalAction } from "./overview.js";
import { policyAction, policyPage, policyPreviewPage } from "./policy.js";
import { trafficCsv, trafficPage } from "./traffic.js";
import { projectCreateAction, projectOriginsAction, projectsPage } from "./projects.js";
import { cookieName, csrfValid, LoginLimiter, readCookie, sameOrigin, sessionCookie, signInAddress, SessionStore, type DashboardSession } from "./sessions.js";

/**
 * The dashboard (`/dashboard`): server-rendered HTML pages for an org, signed in with one of its
 * secret keys. Every page and change runs the API's own routes through the request pipeline
 * in-process (http/pipeline.ts callRoute), as the signed-in key; see docs/dashboard.md. Mounted beside the API routes; its answers are HTML,
 * never the JSON envelope, and every failure is an HTML page with a clear message.
 */

/** Largest form body accepted (a bot policy with many rules). */
const MAX_FORM_BYTES = 64 * 1024;

/** What a handler reads from the uWS request, copied before the first await. */
interface Req {
  query: string;
  cookie: string;
  /** host[:port] the browser used: X-Forwarded-Host from a trusted proxy, else the Host header. */
  host: string;
  /** Every name this service answers to, for the Origin check (sameOrigin). */
  hosts: string[];
  origin: string;
  referer: string;
  contentType: string;
  contentLength: string;
  /** The request reached the service over https (X-Forwarded-Proto from a trusted proxy). */
  secure: boolean;
  /** Client address (after trusted proxies; an IPv6 one as its /64), for the sign-in limit; read for sign-ins only (readReq). */
  client: string;
  /** Whose share of the public body pool a form counts against (body.ts). */
  bodyOwner: BodyOwner;
}

/** A page's HTML, or a download (CSV); null: not found. */
type Page = (ctx: DashContext) => Promise<string | Download | null>;
/** A file the browser saves (Content-Disposition: attachment). */
interface Download {
  filename: string;
  csv: string;
}
/** A signed-in request: its session, the key it signed in with, and who is looking. */
type SignedIn = { session: DashboardSession; principal: KeyPrincipal; viewer: Viewer };
type Action = (ctx: DashContext) => Promise<ActionResult>;

export interface Dashboard {
  sessions: SessionStore;
}

/**
 * What mounting may change, for tests: `wrap` replaces each page's and action's function (it gets
 * the entry's `METHOD /path`), e.g. with one that records being called.
 */
export interface DashboardOptions {
  wrap?: HandlerWrap;
}

export function mountDashboard(app: TemplatedApp, deps: AppDeps, opts: DashboardOptions = {}): Dashboard {
  const config = deps.config;
  const sessions = new SessionStore(config.FS_DASHBOARD_IDLE_MINUTES * 60_000, { max: config.FS_DASHBOARD_MAX_SESSIONS, perOrg: config.FS_DASHBOARD_SESSIONS_PER_ORG }, deps.peers.sessionLink());
  const limiter = new LoginLimiter(config.FS_DASHBOARD_SIGNIN_FAILURES, config.FS_DASHBOARD_SIGNIN_WINDOW_MINUTES * 60_000, undefined, deps.peers.loginLink());
  const routes = dashboardRoutes(deps);
  const publicHost = deps.config.FS_PUBLIC_URL ? new URL(deps.config.FS_PUBLIC_URL).host : "";
  setInterval(() => sessions.sweep(Date.now()), 60_000).unref();

  /** `withClient`: the client address is needed (sign-in), so a trusted proxy's X-Forwarded-For lines are walked. */
  const readReq = (res: HttpResponse, req: HttpRequest, withClient = false): Req => {
    const peer = peerAddress(res);
    const fromProxy = deps.beacon.trusted.trusts(peer);
    // Every X-Forwarded-For line: the sign-in limit and a form body's share count the client.
    const xff = fromProxy ? forwardedFor(req) : "";
    const client = withClient ? deps.beacon.trusted.clientIp(peer, xff) : null;
    const direct = req.getHeader("host");
    const forwarded = fromProxy ? req.getHeader("x-forwarded-host").split(",")[0]!.trim() : "";
    return {
      query: req.getQuery() ?? "",
      cookie: req.getHeader("cookie"),
      host: forwarded || direct,
      hosts: [direct, forwarded, publicHost],
      origin: req.getHeader("origin"),
      referer: req.getHeader("referer"),
      contentType: req.getHeader("content-type"),
      contentLength: declaredLength(req),
      secure: fromProxy && req.getHeader("x-forwarded-proto").split(",")[0]!.trim().toLowerCase() === "https",
      client: !withClient ? "" : client ? signInAddress(client) : peer,
      bodyOwner: { pool: "public", peer, forwardedFor: xff },
    };
  };

  /** The session of the request's cookie, with its key checked again; null when signed out. */
  const signedIn = async (r: Req, nowMs: number): Promise<SignedIn | null> => {
    const id = readCookie(r.cookie, cookieName(r.secure));
    const session = sessions.get(id, nowMs);
    if (!session) return null;
    // On a cluster node the key and the org may be read from PostgreSQL first, off the event loop.
    const key = await withStore(() => deps.auth.keyById(session.keyId));
    if (!key || key.deleted_at !== undefined || key.org_id !== session.orgId || key.type !== "secret" || key.disabled_at !== null || (key.expires_at !== null && nowMs >= key.expires_at)) {
      sessions.destroy(id);
      return null;
    }
    const org = await deps.reads.get("orgs", session.orgId);
    const viewer: Viewer = { orgId: session.orgId, orgName: org?.name ?? session.orgId, keyId: session.keyId, csrf: session.csrf, flash: null };
    return { session, principal: { key, orgId: key.org_id }, viewer };
  };

  const contextFor = (r: Req, s: SignedIn, nowMs: number, fields: URLSearchParams): DashContext => ({
    deps,
    routes: routes as DashboardRoutes,
    viewer: s.viewer,
    principal: s.principal,
    nowMs,
    query: fields,
    base: `${r.secure ? "https" : "http"}://${r.host}`,
  });

  for (const head of [false, true]) {
    const method = head ? "head" : "get";
    app[method]("/dashboard/style.css", (res, req) => {
      const state = newState(res, req.getHeader("x-request-id"), undefined, head);
      state.aborted = true; // answered here, at once
      res.cork(() => {
        res.writeHeader("content-type", "text/css; charset=utf-8");
        res.writeHeader("cache-control", "public, max-age=3600");
        res.writeHeader("x-content-type-options", "nosniff");
        if (head) res.endWithoutBody(Buffer.byteLength(STYLESHEET));
        else res.end(STYLESHEET);
      });
    });
    app[method]("/dashboard/", (res, req) => redirect(res, newState(res, req.getHeader("x-request-id"), `${head ? "HEAD" : "GET"} /dashboard/`, head), "/dashboard"));
  }

  const loginPageOf = (res: HttpResponse, req: HttpRequest, head: boolean): void => {
    const state = newState(res, req.getHeader("x-request-id"), `${head ? "HEAD" : "GET"} /dashboard/login`, head);
    const r = readReq(res, req);
    void signedIn(r, Date.now()).then((s) => {
      if (s) return redirect(res, state, "/dashboard");
      const hadCookie = readCookie(r.cookie, cookieName(r.secure)) !== undefined;
      const m = new URLSearchParams(r.query).get("m");
      html(res, state, 200, loginPage(loginMessage(m, hadCookie, deps.config.FS_DASHBOARD_IDLE_MINUTES)), hadCookie ? { "set-cookie": sessionCookie(null, r.secure) } : undefined);
    }, (err: unknown) => failPage(res, state, deps, err, null));
  };
  app.get("/dashboard/login", (res, req) => loginPageOf(res, req, false));
  app.head("/dashboard/login", (res, req) => loginPageOf(res, req, true));

  app.post("/dashboard/login", (res, req) => {
    const state = newState(res, req.getHeader("x-request-id"), "POST /dashboard/login");
    const r = readReq(res, req, true);
    void readForm(res, state, r, deps)
      .then(async (form) => {
        const nowMs = Date.now();
        if (!sameOrigin(r.origin, r.referer, r.hosts)) throw new ApiError("FORBIDDEN", "This form was sent from another site; sign in from the dashboard's own page.");
        const plain = (form.get("key") ?? "").trim();
        let principal: KeyPrincipal;
        try {
          if (!plain) throw new ApiError("MISSING_KEY", "Enter a secret key (fs_live_…).");
          principal = await withStore(() => deps.auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, nowMs));
        } catch (err) {
          const e = toApiError(err);
          if (e.status >= 500) throw err; // the store away (NOT_READY): not a verdict on the key
          // A key that did not match is a guess: counted, and past the limit answered 429. A right
          // key that cannot sign in (expired, disabled, publishable) says why; a right key that can
          // signs in whatever the counts.
          if (e.code === "INVALID_KEY") {
            const keyId = parseKey(plain)?.id ?? "";
            const wait = limiter.retryAfter(r.client, keyId, nowMs);
            limiter.fail(r.client, keyId, nowMs);
            if (wait > 0) {
              const text = `That key was not accepted. Too many wrong keys came from your address or for this key id: wait ${Math.ceil(wait / 60)} minutes before trying others. The right key signs in at any time.`;
              return html(res, state, 429, loginPage({ kind: "error", text }), { "retry-after": String(wait) });
            }
          }
          return html(res, state, e.status === 403 ? 403 : 401, loginPage({ kind: "error", text: `That key was not accepted: ${e.message}` }));
        }
        sessions.destroy(readCookie(r.cookie, cookieName(r.secure)));
        const { id } = sessions.create(principal.orgId, principal.key.id, nowMs);
        deps.log.info("dashboard sign-in", { org_id: principal.orgId, key_id: principal.key.id });
        redirect(res, state, "/dashboard", sessionCookie(id, r.secure));
      })
      .catch((err: unknown) => failPage(res, state, deps, err, null));
  });

  app.post("/dashboard/logout", (res, req) => {
    const state = newState(res, req.getHeader("x-request-id"), "POST /dashboard/logout");
    const r = readReq(res, req);
    void readForm(res, state, r, deps)
      .then(async (form) => {
        const s = await guard(r, form);
        const id = readCookie(r.cookie, cookieName(r.secure));
        if (s) sessions.destroy(id);
        redirect(res, state, "/dashboard/login?m=signed-out", sessionCookie(null, r.secure));
      })
      .catch((err: unknown) => failPage(res, state, deps, err, null));
  });

  /**
   * The checks of every change: the form came from a page of this service (Origin, or Referer
   * without it), there is a session, and the form carries the session's CSRF token.
   * @returns the session, or null when signed out (the caller sends the browser to sign in)
   */
  /**
   * The signed-in session; with several front threads, looked up once more a moment later when
   * the cookie names a session this thread does not know: the thread that created it (a sign-in
   * answered a few milliseconds ago) may not have been heard yet.
   */
  const signedInSoon = async (r: Req, nowMs: number): Promise<SignedIn | null> => {
    const s = await signedIn(r, nowMs);
    if (s || deps.front.threads === 1 || readCookie(r.cookie, cookieName(r.secure)) === undefined) return s;
    await new Promise((resolve) => setTimeout(resolve, SESSION_WAIT_MS));
    return signedIn(r, Date.now());
  };

  const guard = async (r: Req, form: URLSearchParams): Promise<SignedIn | null> => {
    if (!sameOrigin(r.origin, r.referer, r.hosts)) throw new ApiError("FORBIDDEN", "This form was sent from another site, so nothing was changed. Use the dashboard's own pages.");
    const s = await signedInSoon(r, Date.now());
    if (!s) return null;
    if (!csrfValid(s.session, form.get("csrf"))) throw new ApiError("FORBIDDEN", "This form is missing its security token or carries an old one, so nothing was changed. Reload the page and try again.");
    return s;
  };

  const getPage = (path: string, need: Capability, render: Page): void => {
    // GET, and HEAD answered as its GET (status and headers, the length of the body), without the body.
    for (const head of [false, true]) {
      app[head ? "head" : "get"](path, (res, req) => {
        const state = newState(res, req.getHeader("x-request-id"), `${head ? "HEAD" : "GET"} ${path}`, head);
        const r = readReq(res, req);
        const nowMs = Date.now();
        void signedInSoon(r, nowMs).then((s) => show(res, state, r, s, nowMs, need, render), (err: unknown) => failPage(res, state, deps, err, null));
      });
    }
  };

  /** Renders a page for a signed-in session (`fields`: a POSTed form's, else the query string's). */
  const show = (res: HttpResponse, state: ResponseState, r: Req, s: SignedIn | null, nowMs: number, need: Capability, render: Page, fields?: URLSearchParams): void => {
    {
      if (!s) {
        const stale = readCookie(r.cookie, cookieName(r.secure)) !== undefined;
        return redirect(res, state, stale ? "/dashboard/login?m=ended" : "/dashboard/login", stale ? sessionCookie(null, r.secure) : undefined);
      }
      // The page's declared capability, before any of it runs (403 page).
      try {
        authorize(need, s.principal);
      } catch (err) {
        return failPage(res, state, deps, err, s.viewer);
      }
      s.viewer.flash = s.session.flash;
      if (s.session.flash !== null) {
        s.session.flash = null;
        sessions.changed(readCookie(r.cookie, cookieName(r.secure)), nowMs);
      }
      let query: URLSearchParams;
      try {
        query = fields ?? new URLSearchParams(r.query);
      } catch {
        query = new URLSearchParams();
      }
      void render(contextFor(r, s, nowMs, query)).then(
        (body) =>
          body === null
            ? html(res, state, 404, errorPage(404, "Not found", "There is no such page, or it belongs to another org.", s.viewer))
            : typeof body === "string"
              ? html(res, state, 200, body)
              : write(res, state, 200, body.csv, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${body.filename.replace(/[^\w.-]/g, "_")}"` }),
        (err: unknown) => failPage(res, state, deps, err, s.viewer),
      );
    }
  };

  const postAction = (path: string, need: Capability, act: Action, back: (form: URLSearchParams) => string): void => {
    app.post(path, (res, req) => {
      const state = newState(res, req.getHeader("x-request-id"), `POST ${path}`);
      const r = readReq(res, req);
      void readForm(res, state, r, deps)
        .then(async (form) => {
          const s = await guard(r, form);
          if (!s) return redirect(res, state, "/dashboard/login?m=ended", sessionCookie(null, r.secure));
          // The action's declared capability, before any of it runs: a 403 page, nothing changed.
          try {
            authorize(need, s.principal);
          } catch (err) {
            return failPage(res, state, deps, err, s.viewer);
          }
          const ctx = contextFor(r, s, Date.now(), form);
          let result: ActionResult;
          try {
            result = await act(ctx);
          } catch (err) {
            const e = toApiError(err);
            if (e.code === "INTERNAL_ERROR") throw err;
            s.session.flash = { kind: "error", text: e.message };
            sessions.changed(readCookie(r.cookie, cookieName(r.secure)), Date.now());
            return redirect(res, state, back(form));
          }
          if (result.endSession) {
            sessions.destroy(readCookie(r.cookie, cookieName(r.secure)));
            return redirect(res, state, result.redirect, sessionCookie(null, r.secure));
          }
          if (result.flash) {
            s.session.flash = result.flash;
            sessions.changed(readCookie(r.cookie, cookieName(r.secure)), Date.now());
          }
          redirect(res, state, result.redirect);
        })
        .catch((err: unknown) => failPage(res, state, deps, err, null));
    });
  };

  /**
   * A page rendered from a POSTed form that changes nothing (a preview): the same checks as a
   * change (Origin, session, CSRF token), then the page, as a GET would show it.
   */
  const postPage = (path: string, need: Capability, render: Page): void => {
    app.post(path, (res, req) => {
      const state = newState(res, req.getHeader("x-request-id"), `POST ${path}`);
      const r = readReq(res, req);
      void readForm(res, state, r, deps)
        .then(async (form) => show(res, state, r, await guard(r, form), Date.now(), need, render, form))
        .catch((err: unknown) => failPage(res, state, deps, err, null));
    });
  };

  for (const e of dashboardTable()) {
    const label = `${e.method.toUpperCase()} ${e.path}`;
    const need = { kind: "session" as const, ...e.need };
    if (e.kind === "page") getPage(e.path, e.need, opts.wrap ? opts.wrap(label, e.render, need) : e.render);
    else if (e.kind === "form-page") postPage(e.path, e.need, opts.wrap ? opts.wrap(label, e.render, need) : e.render);
    else postAction(e.path, e.need, opts.wrap ? opts.wrap(label, e.act, need) : e.act, e.back);
  }

  // Anything else under /dashboard is an HTML 404 (the API's catch-all would answer JSON).
  const notFound = (res: HttpResponse, req: HttpRequest): void => {
    const state = newState(res, req.getHeader("x-request-id"));
    html(res, state, 404, errorPage(404, "Not found", `There is no dashboard page for ${req.getCaseSensitiveMethod().toUpperCase()} ${req.getUrl()}.`, null));
  };
  app.any("/dashboard", notFound);
  app.any("/dashboard/*", notFound);

  return { sessions };
}

/**
 * The dashboard's pages and actions, each with the capability its session needs (http/pipeline.ts
 * `Capability`: a scope of the signed-in key; `live`: a session signed in with a test key is
 * refused), checked before the page or action runs: a session without it gets a 403 page, and
 * one signed out is sent to sign in. The API routes a page or action calls are checked again
 * against their own `auth` (callRoute). See docs/api.md, "Capabilities".
 */
export type DashboardEntry = { path: string; need: Capability } & (
  | { kind: "page"; method: "get"; render: Page }
  /** A page rendered from a POSTed form that changes nothing (a preview): the checks of an action, then the page. */
  | { kind: "form-page"; method: "post"; render: Page }
  | { kind: "action"; method: "post"; act: Action; back: (form: URLSearchParams) => string }
);

const project = (form: URLSearchParams): string => encodeURIComponent(form.get("project") ?? "");
const page = (path: string, render: Page, need: Capability = {}): DashboardEntry => ({ kind: "page", method: "get", path, need, render });
const action = (path: string, act: Action, back: (form: URLSearchParams) => string, need: Capability = {}): DashboardEntry => ({ kind: "action", method: "post", path, need, act, back });
/** Billing starts or changes a real subscription: the billing scope, and never from a test key. */
const BILLING: Capability = { scope: "billing", live: true };

export function dashboardTable(): DashboardEntry[] {
  return [
    page("/dashboard", overviewPage),
    page("/dashboard/traffic", trafficPage),
    page("/dashboard/traffic.csv", trafficCsv),
    page("/dashboard/observations", observationsPage),
    page("/dashboard/observations/hit", hitPage),
    page("/dashboard/checks", checksPage),
    page("/dashboard/policy", policyPage),
    page("/dashboard/projects", projectsPage),
    page("/dashboard/keys", keysPage),
    page("/dashboard/keys/confirm", keyConfirmPage),
    page("/dashboard/webhooks", webhooksPage),
    action("/dashboard/billing/checkout", checkoutAction, () => "/dashboard", BILLING),
    action("/dashboard/billing/portal", portalAction, () => "/dashboard", BILLING),
    action("/dashboard/checks/feedback", checkFeedbackAction, backOf),
    action("/dashboard/checks/history", checkHistoryAction, () => "/dashboard/checks"),
    // The live model scores live checks: never reset from a test key's session.
    page("/dashboard/checks/reset-model/confirm", modelResetConfirmPage, { live: true }),
    action("/dashboard/checks/reset-model", modelResetAction, () => "/dashboard/checks", { live: true }),
    action("/dashboard/policy", policyAction, (f) => `/dashboard/policy?project=${project(f)}`),
    { kind: "form-page", method: "post", path: "/dashboard/policy/preview", need: {}, render: policyPreviewPage },
    action("/dashboard/projects", projectCreateAction, () => "/dashboard/projects"),
    action("/dashboard/projects/origins", projectOriginsAction, () => "/dashboard/projects"),
    action("/dashboard/keys", keyCreateAction, () => "/dashboard/keys"),
    action("/dashboard/keys/disable", keyDisableAction, () => "/dashboard/keys"),
    action("/dashboard/keys/enable", keyEnableAction, () => "/dashboard/keys"),
    action("/dashboard/keys/delete", keyDeleteAction, () => "/dashboard/keys"),
    action("/dashboard/keys/roll", keyRollAction, () => "/dashboard/keys"),
    action("/dashboard/webhooks", webhookCreateAction, () => "/dashboard/webhooks"),
    action("/dashboard/webhooks/delete", webhookDeleteAction, () => "/dashboard/webhooks"),
    action("/dashboard/webhooks/roll", webhookRollAction, () => "/dashboard/webhooks"),
  ];
}

/** Per-answer state; `route` (`METHOD /path`) labels the answer in the metrics and the access log. */
/** How long a thread waits, once, for a session another front thread may have just created. */
const SESSION_WAIT_MS = 25;

/** A dashboard answer's state; `head`: a HEAD, answered without the body. */
type PageState = ResponseState & { head?: boolean };

function newState(res: HttpResponse, requestId: string, route?: string, head = false): PageState {
  // The abort handler is set before any answer: uWS needs one for a HEAD ended by endWithoutBody.
  const state: PageState = { aborted: false, requestId: acceptRequestId(requestId), startedAt: performance.now(), route, head };
  res.onAborted(() => {
    state.aborted = true;
    state.lease?.release();
  });
  return state;
}

/** The form fields of a POST (application/x-www-form-urlencoded, at most MAX_FORM_BYTES). */
function readForm(res: HttpResponse, state: ResponseState, r: Req, deps: AppDeps): Promise<URLSearchParams> {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(r.contentType)) {
    return Promise.reject(new ApiError("UNSUPPORTED_MEDIA_TYPE", "The dashboard takes its forms as application/x-www-form-urlencoded."));
  }
  return readBody(res, state, MAX_FORM_BYTES, r.contentLength, deps.bodies, r.bodyOwner).then((raw) => new URLSearchParams(raw.toString("utf8")));
}

/** Headers of every dashboard page: no caching, no framing, no scripts, no sniffing. */
const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
};

const STATUS: Record<number, string> = { ...STATUS_TEXT, 303: "303 See Other" };

function html(res: HttpResponse, state: ResponseState, status: number, body: string, headers?: Record<string, string>): void {
  write(res, state, status, body, headers);
}

function redirect(res: HttpResponse, state: ResponseState, location: string, cookie?: string): void {
  write(res, state, 303, "", cookie ? { location, "set-cookie": cookie } : { location });
}

function write(res: HttpResponse, state: PageState, status: number, body: string, headers?: Record<string, string>): void {
  if (state.lease) {
    state.lease.release();
    state.lease = null;
  }
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => {
    res.writeStatus(STATUS[status] ?? String(status));
    // A download names its own content type (the other page headers apply to it as well).
    for (const k in PAGE_HEADERS) if (headers?.[k] === undefined) res.writeHeader(k, PAGE_HEADERS[k]!);
    res.writeHeader("x-request-id", state.requestId);
    if (headers) for (const k in headers) res.writeHeader(k, headers[k]!);
    if (state.head) res.endWithoutBody(Buffer.byteLength(body), state.close === true);
    else res.end(body, state.close === true);
  });
  recordAnswer(state, status);
}

/** An HTML error page for a failure: our errors with their status and message, anything else logged. */
function failPage(res: HttpResponse, state: ResponseState, deps: AppDeps, err: unknown, viewer: Viewer | null): void {
  const e = toApiError(err);
  if (e.code === "INTERNAL_ERROR") deps.log.error("dashboard request failed", { request_id: state.requestId, err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  const title = e.status === 403 ? "Not allowed" : e.status === 404 ? "Not found" : e.status >= 500 ? "Something went wrong" : "That did not work";
  const text = e.code === "INTERNAL_ERROR" ? `The dashboard could not answer; the error is logged with request id ${state.requestId}.` : e.message;
  const headers: Record<string, string> = {};
  if (e.headers?.["retry-after"]) headers["retry-after"] = e.headers["retry-after"];
  html(res, state, e.status, errorPage(e.status, title, text, viewer), headers);
}
