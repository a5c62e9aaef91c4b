import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import { readBody } from "./body.js";
import type { AppDeps } from "./deps.js";
import { ApiError } from "../shared/errors.js";
import { toApiError } from "./to-api-error.js";
import { acceptRequestId, declaredLength, forwardedFor, peerAddress, queryParam } from "./request.js";
import { writeData, writeError, type ResponseState } from "./respond.js";
import { listObservations, publicObservation, syncObservations } from "./routes/observations.get.js";
import { demoPage, demoResultPage, type ObservationInWords } from "./demo-page.js";
import { checkSubmission, type CheckAnswer } from "./routes/check.post.js";
import { explainReason } from "../dashboard/reasons.js";
import type { ObservationRecord } from "../store/records.js";
import { SESSION_ID } from "../front/beacon/token.js";
import { DemoLimits, type DemoCall } from "../front/demo-limits.js";

/** The first pause between looks for the report; each pause doubles, up to REPORT_MAX_PAUSE_MS. */
const REPORT_FIRST_PAUSE_MS = 25;
const REPORT_MAX_PAUSE_MS = 500;

/** The built beacon, held in memory with its gzip form and ETag. */
export interface BeaconAsset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/** Loads dist/beacon/fs.js (built by `npm run build`); null when it has not been built. */
export function loadBeaconAsset(path: string): BeaconAsset | null {
  if (!existsSync(path)) return null;
  const body = readFileSync(path);
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` };
}

/**
 * Non-JSON routes: the beacon script and the demo page. Mounted before the API routes' catch-all.
 *
 * `GET /js/fs.js`: cached a day by browsers and CDNs and revalidated with its ETag afterwards
 * (the URL is not versioned, so a longer max-age would keep an old beacon in browsers for that
 * long); gzip when the client accepts it; CORS-readable so sites may use Subresource Integrity.
 */
export function mountStatic(app: TemplatedApp, deps: AppDeps, asset: BeaconAsset | null): void {
  // GET and HEAD (a HEAD gets the same status and headers, the length of the body GET would send).
  const beacon = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const state = stateFor(res, req.getHeader("x-request-id"));
    if (!asset) {
      writeError(res, state, new ApiError("NOT_READY", "The beacon script has not been built; run `npm run build`."));
      return;
    }
    const inm = req.getHeader("if-none-match");
    const notModified = inm !== "" && inm.split(",").some((t) => t.trim().replace(/^W\//, "") === asset.etag);
    const gzip = /\bgzip\b/.test(req.getHeader("accept-encoding"));
    res.cork(() => {
      if (notModified) res.writeStatus("304 Not Modified");
      res.writeHeader("content-type", "application/javascript; charset=utf-8");
      res.writeHeader("cache-control", "public, max-age=86400, stale-while-revalidate=604800");
      res.writeHeader("etag", asset.etag);
      res.writeHeader("vary", "Accept-Encoding");
      res.writeHeader("access-control-allow-origin", "*");
      res.writeHeader("cross-origin-resource-policy", "cross-origin");
      res.writeHeader("x-content-type-options", "nosniff");
      if (notModified) {
        res.endWithoutBody();
        return;
      }
      if (gzip) res.writeHeader("content-encoding", "gzip");
      const body = gzip ? asset.gzip : asset.body;
      if (head) res.endWithoutBody(body.length);
      else res.end(body);
    });
  };
  app.get("/js/fs.js", beacon(false));
  app.head("/js/fs.js", beacon(true));

  // The service's own front door: the dashboard, its icon, and the pages Stripe sends a customer
  // back to when no URL of the site's own was given (FS_PUBLIC_URL/billing/success and /canceled).
  const home = (res: HttpResponse) => {
    res.cork(() => {
      res.writeStatus("302 Found");
      res.writeHeader("location", "/dashboard");
      res.end();
    });
  };
  app.get("/", home);
  app.head("/", home);
  // Each page without a key answers HEAD as its GET, without the body.
  const favicon = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    // The abort handler is needed: without one, uWS counts a HEAD ended by endWithoutBody as a
    // handler that returned without answering, and aborts the process.
    stateFor(res, req.getHeader("x-request-id"));
    res.cork(() => {
      res.writeHeader("content-type", "image/svg+xml");
      res.writeHeader("cache-control", "public, max-age=604800");
      if (head) res.endWithoutBody(FAVICON.length);
      else res.end(FAVICON);
    });
  };
  app.get("/favicon.ico", favicon(false));
  app.head("/favicon.ico", favicon(true));
  for (const outcome of ["success", "canceled"] as const) {
    const page = billingReturnPage(outcome);
    app.get(`/billing/${outcome}`, (res, req) => html(res, stateFor(res, req.getHeader("x-request-id")), page));
    app.head(`/billing/${outcome}`, (res, req) => html(res, stateFor(res, req.getHeader("x-request-id")), page, true));
  }

  if (!deps.config.FS_DEMO) return;

  // Anyone may call these without a key: each client address gets a bounded share.
  const limits = new DemoLimits({ submits: deps.config.FS_DEMO_SUBMIT_LIMIT, reads: deps.config.FS_DEMO_READ_LIMIT });
  /** The request's client address (read before the handler returns); refused past its limit. */
  const admit = (res: HttpResponse, req: HttpRequest, state: ResponseState, call: DemoCall): { peer: string; forwardedFor: string } | null => {
    const peer = peerAddress(res);
    const forwarded = deps.beacon.trusted.trusts(peer) ? forwardedFor(req) : "";
    try {
      limits.admit(call, deps.beacon.trusted.clientIp(peer, forwarded), Date.now());
    } catch (err) {
      writeError(res, state, failWith(deps, state, err));
      return null;
    }
    return { peer, forwardedFor: forwarded };
  };

  const demo = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const state = stateFor(res, req.getHeader("x-request-id"));
    if (!admit(res, req, state, "read")) return;
    void demoInfo(deps).then(
      (demo) => html(res, state, demoPage(demo.publishable_key), head),
      (err: unknown) => writeError(res, state, failWith(deps, state, err)),
    );
  };
  app.get("/demo", demo(false));
  app.head("/demo", demo(true));

  // The demo's "site backend": shows what a real backend receives in the hidden field, and the
  // session's observations (a real backend would forward the field to POST /v1/check).
  app.post("/demo/submit", (res, req) => {
    const state = stateFor(res, req.getHeader("x-request-id"));
    const client = admit(res, req, state, "submit");
    if (!client) return;
    const userAgent = req.getHeader("user-agent");
    const length = declaredLength(req);
    const owner = { pool: "public", peer: client.peer, forwardedFor: client.forwardedFor } as const;
    readBody(res, state, deps.config.FS_MAX_BODY_BYTES, length, deps.bodies, owner)
      .then(async (raw) => {
        const demo = await demoInfo(deps);
        const fields = new URLSearchParams(raw.toString("utf8"));
        const signalsText = fields.get("_fs_signals");
        const signals = parseSignals(signalsText);
        const sessionId = typeof signals?.session_id === "string" && SESSION_ID.test(signals.session_id) ? signals.session_id : null;
        const tokenSession = typeof signals?.token === "string" ? deps.beacon.tokens.verify(signals.token, demo.project_id, Date.now()) : null;
        // The site's backend: POST /v1/check on the submission, as a real one would send it (the
        // form's fields with the beacon's hidden field, the e-mail, the browser's User-Agent). Run
        // in-process for the demo org, neither charged nor kept in its check history.
        const email = fields.get("email")?.trim() || undefined;
        const form_data: Record<string, string> = {};
        for (const name of ["name", "email", "message", "_fs_signals"]) {
          const v = fields.get(name);
          if (v !== null) form_data[name] = v.slice(0, 5000);
        }
        const body = { form_id: "demo-contact", form_data, metadata: { ...(email ? { email: email.slice(0, 320) } : {}), ...(userAgent ? { user_agent: userAgent.slice(0, 2048) } : {}) } };
        let check: CheckAnswer | null = null;
        let checkError: string | null = null;
        try {
          check = (await checkSubmission(deps, demo.org_id, body, Date.now())).data;
        } catch (err) {
          checkError = toApiError(err).message;
        }
        const pageView = typeof signals?.observation_id === "string" ? signals.observation_id : null;
        const items = sessionId ? await sessionAfterReport(deps, state, demo.project_id, sessionId, pageView) : [];
        const observations = items.map((o) => ({ ...observationInWords(o), observation: publicObservation(o) }));
        html(res, state, demoResultPage({ check, checkError, signalsText, tokenValid: tokenSession !== null && tokenSession === sessionId, observations }));
      })
      .catch((err: unknown) => writeError(res, state, failWith(deps, state, err)));
  });

  app.get("/demo/observations", (res, req) => {
    const state = stateFor(res, req.getHeader("x-request-id"));
    if (!admit(res, req, state, "read")) return;
    const query = req.getQuery() ?? "";
    demoInfo(deps)
      .then(async (demo) => {
        // Decoded inside the chain: malformed percent-encoding is a 400, never an uncaught throw.
        const sessionId = queryParam(query, "session_id") ?? "";
        if (!SESSION_ID.test(sessionId)) throw new ApiError("VALIDATION_ERROR", "query.session_id: a beacon session id (s_...).");
        await syncObservations(deps);
        const items = (await listObservations(deps, demo.project_id, { limit: 10, before: Number.MAX_SAFE_INTEGER, sessionId, kind: undefined })).items;
        writeData(res, state, 200, { items: items.map((o) => ({ ...observationInWords(o), observation: publicObservation(o) })) });
      })
      .catch((err: unknown) => writeError(res, state, failWith(deps, state, err)));
  });
}

/** An observation told in words for the demo: one summary line, and each reason as the dashboard explains it. */
export function observationInWords(o: ObservationRecord): ObservationInWords {
  const who = o.ua.bot_name
    ? `a bot (${o.ua.bot_name}${o.bot_verified ? ", verified" : o.bot_verified === false ? ", not verified" : ""})`
    : o.ua.browser
      ? `${o.ua.browser}${o.ua.os ? ` on ${o.ua.os}` : ""}`
      : "a client that is not a browser";
  const decided = { allow: "allowed: it looks like a person", review: "to review: some signals are doubtful", block: "blocked: it looks automated" }[o.decision];
  const summary = `A ${o.kind.replace(".", " ")} from ${who}${o.page ? ` on ${o.page}` : ""}, ${decided} (risk score ${Math.round(o.score * 100)}%).${o.reasons.length === 0 ? " Nothing about it raised the score." : ""}`;
  return { summary, explained: o.reasons.map(explainReason) };
}

/**
 * The session's observations (newest first, up to 10) once the beacon's report of this submission
 * is stored: a form.submit newer than the page view the hidden field names (any, when it names
 * none). The report travels beside the form, so it may arrive a little after it; the session is
 * read again after doubling pauses until it shows, the client leaves, or FS_DEMO_REPORT_WAIT_MS have
 * passed (a beacon that was blocked sends none). Bounded per submission, and submissions per
 * client address (DemoLimits).
 */
async function sessionAfterReport(deps: AppDeps, state: ResponseState, projectId: string, sessionId: string, pageView: string | null): Promise<ObservationRecord[]> {
  const deadline = performance.now() + deps.config.FS_DEMO_REPORT_WAIT_MS;
  for (let pause = REPORT_FIRST_PAUSE_MS; ; pause *= 2) {
    await syncObservations(deps);
    const { items } = await listObservations(deps, projectId, { limit: 10, before: Number.MAX_SAFE_INTEGER, sessionId, kind: undefined });
    const left = deadline - performance.now();
    if (hasReport(items, pageView) || state.aborted || left <= 0) return items;
    await new Promise((r) => setTimeout(r, Math.min(pause, REPORT_MAX_PAUSE_MS, left)));
  }
}

/** Whether `items` (newest first) hold a form.submit newer than the observation `pageView`. */
function hasReport(items: readonly ObservationRecord[], pageView: string | null): boolean {
  for (const o of items) {
    if (o.id === pageView) return false;
    if (o.kind === "form.submit") return true;
  }
  return false;
}

interface HiddenField {
  session_id?: unknown;
  token?: unknown;
  observation_id?: unknown;
}

function parseSignals(text: string | null): HiddenField | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null ? (v as HiddenField) : null;
  } catch {
    return null;
  }
}

interface DemoInfo {
  org_id: string;
  project_id: string;
  publishable_key: string;
}

let demoCache: DemoInfo | null = null;

/** The demo project recorded at first start. */
async function demoInfo(deps: AppDeps): Promise<DemoInfo> {
  if (demoCache) return demoCache;
  const ack = await deps.store.send({ op: "demo.get" });
  const v = ack.ok ? ack.demo : null;
  if (!v) throw new ApiError("NOT_FOUND", "This installation has no demo project (it was initialised before the demo existed).");
  demoCache = v;
  return v;
}

function stateFor(res: HttpResponse, requestId: string): ResponseState {
  const state: ResponseState = { aborted: false, requestId: acceptRequestId(requestId), startedAt: performance.now() };
  res.onAborted(() => {
    state.aborted = true;
    state.lease?.release();
  });
  return state;
}

function html(res: HttpResponse, state: ResponseState, page: string, head = false): void {
  state.lease?.release(); // the demo form's body
  state.lease = null;
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => {
    res.writeHeader("content-type", "text/html; charset=utf-8");
    res.writeHeader("cache-control", "no-store");
    res.writeHeader("x-request-id", state.requestId);
    if (head) res.endWithoutBody(Buffer.byteLength(page));
    else res.end(page);
  });
}

/** The service's icon: a shield, in the dashboard's colours. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 6v9c0 7.5 5.1 13.2 12 15 6.9-1.8 12-7.5 12-15V6z" fill="#1f4e79"/><path d="m10 16 4 4 8-8" stroke="#fff" stroke-width="3" fill="none"/></svg>';

/** Where Stripe's checkout sends the customer back when the site gave no URL of its own. */
function billingReturnPage(outcome: "success" | "canceled"): string {
  const [title, text] =
    outcome === "success"
      ? ["Payment received", "Thank you. The new plan applies as soon as Stripe confirms the payment to this service, usually within seconds."]
      : ["Checkout canceled", "Nothing was charged and the plan is unchanged."];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title} · fraudscore</title><link rel="stylesheet" href="/dashboard/style.css"></head><body><main><h1>${title}</h1><p>${text}</p><p><a href="/dashboard">Open the dashboard</a></p></main></body></html>`;
}

/** Our errors as they are; anything else a logged, generic 500. */
function failWith(deps: AppDeps, state: ResponseState, err: unknown): ApiError {
  const apiErr = toApiError(err);
  if (apiErr.code === "INTERNAL_ERROR") deps.log.error("demo request failed", { request_id: state.requestId, err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return apiErr;
}
