import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";
import { ApiError } from "../shared/errors.js";
import { BLANK_KEY, isIdempotent, keyHeaderSent } from "../front/idempotency.js";
import { acceptRequestId, forwardedFor, peerAddress, snapshot } from "./request.js";
import { writeError, type ResponseState } from "./respond.js";
import type { Method, Route } from "./route.js";
import { inputsOf } from "./inputs.js";
import { corsHeaders, handle, handleUnwrapped, HTTP_NAME, newCall, poolOf, type RouterDeps } from "./pipeline.js";

export type { RouterDeps } from "./pipeline.js";

/**
 * The router: mounts the route table on uWS and hands each request to the pipeline (pipeline.ts).
 */

const UWS_METHOD: Record<Method, "get" | "post" | "patch" | "put" | "del"> = {
  get: "get",
  post: "post",
  patch: "patch",
  put: "put",
  del: "del",
};

/**
 * Registers every route on the uWS app, plus a catch-all that answers 404 for unknown paths and
 * 405 (with Allow) for known paths called with another method.
 */
export function mountRoutes(app: TemplatedApp, routes: Route<any>[], deps: RouterDeps): void {
  for (const route of routes) {
    if (route.envelope === false) {
      mountUnwrapped(app, route, deps);
      continue;
    }
    const paramCount = (route.pattern.match(/:/g) ?? []).length;
    const label = `${HTTP_NAME[route.method]} ${route.pattern}`;
    const headLabel = `HEAD ${route.pattern}`;
    const extraHeaders = isIdempotent(route) ? [...(route.rawBody?.headers ?? []), "idempotency-key"] : route.rawBody?.headers;
    // An Idempotency-Key sent with nothing uWS lets through is refused, not read as no key: a
    // body route's header walk (request.ts) says whether it was sent; an admin POST without a body
    // walks for it (a retried create must not run twice).
    const idempotent = isIdempotent(route);
    const hasBody = route.body !== undefined || route.rawBody !== undefined;
    // Public bodies count against their client's share: X-Forwarded-For is read here, while the
    // request is valid (beacon routes read it anyway); the peer address only if a body comes in pieces.
    const bodyClient = hasBody && !route.beacon && poolOf(route) !== "keyed";
    const inputs = inputsOf(route);
    const serve = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
      const state: ResponseState = { aborted: false, requestId: "", startedAt: performance.now(), route: head ? headLabel : label };
      if (head) state.head = true;
      const snap = snapshot(req, paramCount, hasBody, deps.testClock, route.beacon === true, extraHeaders);
      if (idempotent && snap.extra["idempotency-key"] === "" && (hasBody ? snap.idempotencyKeySent : route.auth.kind === "admin" && keyHeaderSent(req))) snap.extra["idempotency-key"] = BLANK_KEY;
      if (route.beacon) {
        snap.peer = peerAddress(res);
        // Every X-Forwarded-For line, walked for a trusted proxy's requests only.
        if (deps.trusted.trusts(snap.peer)) snap.forwardedFor = forwardedFor(req);
        state.cors = corsHeaders(snap.origin);
      } else if (route.clientAddress) {
        snap.peer = peerAddress(res);
        if (deps.trusted.trusts(snap.peer)) snap.forwardedFor = forwardedFor(req);
      } else if (bodyClient && !deps.trusted.empty) snap.forwardedFor = forwardedFor(req);
      state.requestId = snap.requestId;
      res.onAborted(() => {
        state.aborted = true;
        state.lease?.release(); // a client that leaves mid-body holds nothing
      });
      handle(newCall(route, inputs, res, state, snap, deps));
    };
    app[UWS_METHOD[route.method]](route.pattern, serve(false));
    // HEAD wherever GET works, through the same pipeline: the key, capability, limits and inputs
    // are checked as for GET, and the answer goes out without its body (a metered route's handler
    // is not run, so a HEAD is never charged: pipeline.ts run).
    if (route.method === "get") app.head(route.pattern, serve(true));
  }
  // CORS preflights of the beacon routes. A preflight carries no key, so it cannot know the
  // project: it is answered for any origin, and the real request is refused (without
  // Access-Control-Allow-Origin) when the project does not allow the origin.
  const preflighted = new Set<string>();
  for (const route of routes) {
    if (!route.beacon || preflighted.has(route.pattern)) continue;
    preflighted.add(route.pattern);
    const methods = routes.filter((r) => r.pattern === route.pattern).map((r) => HTTP_NAME[r.method]).join(", ");
    app.options(route.pattern, (res, req) => {
      const origin = req.getHeader("origin");
      res.cork(() => {
        res.writeStatus("204 No Content");
        if (origin) {
          res.writeHeader("access-control-allow-origin", origin);
          res.writeHeader("access-control-allow-methods", methods);
          res.writeHeader("access-control-allow-headers", "authorization, content-type, x-request-id");
          res.writeHeader("access-control-max-age", "7200");
        }
        res.writeHeader("vary", "Origin");
        res.endWithoutBody();
      });
    });
  }
  const matchers = routes.map((r) => ({ re: patternToRegExp(r.pattern), method: HTTP_NAME[r.method], pattern: r.pattern }));
  app.any("/*", (res, req) => {
    const state: ResponseState = { aborted: false, requestId: "", startedAt: performance.now() };
    state.requestId = acceptRequestId(req.getHeader("x-request-id"));
    const path = req.getUrl();
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const known = matchers.filter((m) => m.re.test(path));
    // HEAD is served wherever GET is.
    const allowed = known.flatMap((m) => (m.method === "GET" ? ["GET", "HEAD"] : [m.method]));
    if (allowed.length > 0) {
      const allow = [...new Set(allowed)].join(", ");
      // Counted under the route's pattern with the method asked (metrics), not as "unmatched".
      state.route = `${method} ${known[0]!.pattern}`;
      writeError(res, state, new ApiError("METHOD_NOT_ALLOWED", `${method} is not allowed on ${path}; allowed: ${allow}.`, { headers: { allow } }));
    } else {
      writeError(res, state, new ApiError("NOT_FOUND", `No route for ${method} ${path}.`));
    }
  });
}

/**
 * A route whose success is its `data` as is (`envelope: false`): a GET without a body,
 * unauthenticated or for the admin token, answering RawJson or RawText. Mounted on its own
 * handler so that no other route pays for the choice; errors still go out in the envelope.
 */
function mountUnwrapped(app: TemplatedApp, route: Route<any>, deps: RouterDeps): void {
  if ((route.auth.kind !== "none" && route.auth.kind !== "admin") || route.body || route.rawBody || route.minCredits || route.beacon || route.method !== "get") {
    throw new Error(`route ${route.pattern}: envelope: false is for GET routes without a body, unauthenticated or for the admin token`);
  }
  const paramCount = (route.pattern.match(/:/g) ?? []).length;
  const label = `GET ${route.pattern}`;
  const inputs = inputsOf(route);
  const serve = (head: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const state: ResponseState = { aborted: false, requestId: "", startedAt: performance.now(), route: head ? `HEAD ${route.pattern}` : label };
    if (head) state.head = true;
    const snap = snapshot(req, paramCount, false, false);
    state.requestId = snap.requestId;
    res.onAborted(() => {
      state.aborted = true;
    });
    handleUnwrapped(newCall(route, inputs, res, state, snap, deps));
  };
  app.get(route.pattern, serve(false));
  app.head(route.pattern, serve(true));
}

function patternToRegExp(pattern: string): RegExp {
  const src = pattern
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${src}$`);
}

