import { randomBase62 } from "../shared/ids.js";
import { readsHeaderOrder } from "./beacon/header-tells.js";
import { ApiError } from "./errors.js";
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
  const extra: Record<string, string> = {};
  for (const h of extraHeaders) extra[h] = req.getHeader(h);
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? "");
  const incomingId = req.getHeader("x-request-id");
  const userAgent = client ? req.getHeader("user-agent") : "";
  return {
    query: req.getQuery() ?? "",
    params,
    authorization: req.getHeader("authorization"),
    contentType: hasBody ? req.getHeader("content-type") : "",
    contentLength: hasBody ? req.getHeader("content-length") : "",
    requestId: acceptRequestId(incomingId),
    testNow: testClock ? req.getHeader("x-fs-test-now") : "",
    origin: client ? req.getHeader("origin") : "",
    userAgent,
    forwardedFor: "",
    peer: "",
    ifNoneMatch: "",
    extra,
    client: client ? clientHeaders(req, userAgent) : null,
  };
}

/**
 * Client hints and header order of a beacon call (uWS lists headers in arrival order, lower-case).
 * The order is listed only for a UA whose order the one tell that reads it looks at
 * (header-tells.ts headerOrder: a Chromium UA): walking the headers costs a native call per
 * header, about 0.2 µs each. (Whether Accept-Language was sent cannot gate it: getHeader answers
 * "" for an absent header and for one sent empty, which the tell counts.)
 */
export function clientHeaders(req: HttpRequest, userAgent: string): NonNullable<RequestSnapshot["client"]> {
  const order: string[] = [];
  if (readsHeaderOrder(userAgent)) {
    req.forEach((name) => {
      order.push(name);
    });
  }
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
