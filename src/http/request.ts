import { randomBase62 } from "../shared/ids.js";
import { readsHeaderOrder } from "../front/beacon/header-tells.js";
import { ApiError } from "../shared/errors.js";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";

/**
 * Everything a handler may read from the uWS request, copied synchronously: the uWS request
 * object is only valid until the handler first returns.
 */
export interface RequestSnapshot {
  query: string;
  params: string[];
  authorization: string;
  contentType: string;
  contentLength: string;
  /**
   * Routes with a body: an Idempotency-Key header was sent, even if uWS trimmed its value to ""
   * (only bytes at or below 0x20 or at or above 0x80).
   */
  idempotencyKeySent: boolean;
  requestId: string;
  /** X-FS-Test-Now header; honoured only with FS_TEST_CLOCK=true. */
  testNow: string;
  /** Beacon routes only (empty elsewhere): Origin, User-Agent. */
  origin: string;
  userAgent: string;
  /**
   * Beacon routes only, set by the router: every X-Forwarded-For line joined (forwardedFor), read
   * only when the peer is a trusted proxy (empty otherwise), and the peer address.
   */
  forwardedFor: string;
  peer: string;
  /** If-None-Match, for routes that answer with an ETag. */
  ifNoneMatch: string;
  /**
   * Beacon routes only (null elsewhere): the client hints the engine sent and the order of the
   * request's header names, for the server-side tells (beacon/header-tells.ts); the order is
   * empty for a UA whose order no tell reads (clientHeaders).
   */
  client: { secChUa: string; secChUaPlatform: string; secChUaMobile: string; order: string[] } | null;
  /** Headers a route asked for by name (Route.rawBody.headers), lower-case names. */
  extra: Record<string, string>;
}

/**
 * Takes the snapshot. `paramCount` is the number of `:name` segments in the matched pattern;
 * body headers are read only for routes with a body and the test clock header only when enabled
 * (each getHeader is a native call on the hot path).
 */
export function snapshot(req: HttpRequest, paramCount: number, hasBody = true, testClock = true, client = false, extraHeaders: readonly string[] = []): RequestSnapshot {
  let extra = NO_EXTRA;
  if (extraHeaders.length > 0) {
    extra = {};
    for (const h of extraHeaders) extra[h] = req.getHeader(h);
  }
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? "");
  const incomingId = req.getHeader("x-request-id");
  const userAgent = client ? req.getHeader("user-agent") : "";
  // One walk over the headers serves both what a body needs and the header order a Chromium UA's tell reads.
  const order: string[] | null = client && readsHeaderOrder(userAgent) ? [] : null;
  const heads = hasBody || order !== null ? walkHeaders(req, order) : null;
  return {
    query: req.getQuery() ?? "",
    params,
    authorization: req.getHeader("authorization"),
    contentType: hasBody ? req.getHeader("content-type") : "",
    contentLength: heads === null ? "" : heads.lengthsDisagree ? CONFLICTING_LENGTH : heads.length,
    idempotencyKeySent: heads !== null && heads.idempotencyKeySent,
    requestId: acceptRequestId(incomingId),
    testNow: testClock ? req.getHeader("x-fs-test-now") : "",
    origin: client ? req.getHeader("origin") : "",
    userAgent,
    forwardedFor: "",
    peer: "",
    ifNoneMatch: "",
    extra,
    client: client ? clientHeaders(req, order ?? NO_ORDER) : null,
  };
}

const NO_ORDER: string[] = [];
/** `extra` of a route that asks for no header by name: one frozen object, not one per request. */
const NO_EXTRA: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Client hints of a beacon call and the order of its header names (uWS lists headers in arrival
 * order, lower-case), taken by the snapshot's header walk only for a UA whose order the one tell
 * that reads it looks at (header-tells.ts headerOrder: a Chromium UA); empty otherwise. (Whether
 * Accept-Language was sent cannot gate it: getHeader answers "" for an absent header and for one
 * sent empty, which the tell counts.)
 */
function clientHeaders(req: HttpRequest, order: string[]): NonNullable<RequestSnapshot["client"]> {
  return {
    secChUa: req.getHeader("sec-ch-ua"),
    secChUaPlatform: req.getHeader("sec-ch-ua-platform"),
    secChUaMobile: req.getHeader("sec-ch-ua-mobile"),
    order,
  };
}

/** The connection's peer address as text (IPv6 in full, IPv4-mapped as uWS gives it). */
export function peerAddress(res: HttpResponse): string {
  return Buffer.from(res.getRemoteAddressAsText()).toString();
}

/**
 * Every X-Forwarded-For line of the request, joined in arrival order with ", " (empty lines left
 * out), as RFC 9110 section 5.3 combines repeated fields. uWS's getHeader answers only the first
 * line, which is the client's own when a proxy appends a line of its own (HAProxy's `option
 * forwardfor`). Walks the headers, a native call each (about 0.2 µs): call it only for a peer
 * that is a trusted proxy, on routes that need the client address.
 */
export function forwardedFor(req: HttpRequest): string {
  let joined = "";
  req.forEach((name, value) => {
    if (name !== "x-forwarded-for" || value === "") return;
    joined = joined === "" ? value : `${joined}, ${value}`;
  });
  return joined;
}

/**
 * What declaredLength answers for a request whose Content-Length lines disagree; readBody refuses
 * it (400) and closes the connection.
 */
export const CONFLICTING_LENGTH = "conflicting";

/** What one walk over a request's headers found (reused: read it before the next walk). */
const walked = { length: "", lengthsDisagree: false, idempotencyKeySent: false, order: null as string[] | null };
function visitHeader(name: string, value: string): void {
  walked.order?.push(name);
  if (name === "content-length") {
    if (walked.length === "") walked.length = value;
    else if (value !== walked.length) walked.lengthsDisagree = true;
  } else if (name === "idempotency-key") walked.idempotencyKeySent = true;
}

/**
 * Walks a request's headers once (a native call each, about 0.15 µs; uWS's getHeader sees only
 * the first of repeated lines, and "" for a line whose value it trimmed away), for a request that
 * may have a body, or whose header order is wanted (`order`, filled in arrival order): its
 * Content-Length, or CONFLICTING_LENGTH when it carries several that differ (uWS frames the body
 * by the first; a proxy in front may have framed it by another, so what follows could be a
 * request smuggled past the proxy: RFC 9112 section 6.3 makes it an error), and whether an
 * Idempotency-Key header was sent at all (idempotency.ts keyHeaderSent).
 */
function walkHeaders(req: HttpRequest, order: string[] | null = null): typeof walked {
  walked.length = "";
  walked.lengthsDisagree = false;
  walked.idempotencyKeySent = false;
  walked.order = order;
  req.forEach(visitHeader);
  walked.order = null;
  return walked;
}

/** The request's Content-Length as readBody takes it (walkHeaders). */
export function declaredLength(req: HttpRequest): string {
  const w = walkHeaders(req);
  return w.lengthsDisagree ? CONFLICTING_LENGTH : w.length;
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Per-process random prefix plus a counter: unique across restarts, cheaper than a UUID per request. */
const ID_PREFIX = `req_${randomBase62(12)}`;
let idCounter = 0;

/** A client's X-Request-Id if short and plain; otherwise a fresh one, e.g. `req_Xk3...9a_1f`. */
export function acceptRequestId(incoming: string): string {
  return incoming && SANE_ID.test(incoming) ? incoming : `${ID_PREFIX}_${(idCounter++).toString(36)}`;
}

/**
 * Value of one query parameter (first occurrence), decoded; undefined when absent.
 * @throws ApiError VALIDATION_ERROR when the value is not valid percent-encoding.
 */
export function queryParam(query: string, name: string): string | undefined {
  if (!query) return undefined;
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    const k = eq < 0 ? part : part.slice(0, eq);
    if (k !== name) continue;
    try {
      return decodeURIComponent((eq < 0 ? "" : part.slice(eq + 1)).replace(/\+/g, " "));
    } catch {
      throw new ApiError("VALIDATION_ERROR", `query.${name}: malformed percent-encoding.`);
    }
  }
  return undefined;
}
