import type { HttpResponse } from "uWebSockets.js";
import { ApiError, STATUS_TEXT } from "../shared/errors.js";
import type { Claim } from "../front/idempotency.js";
import { recordAnswer } from "../front/metrics.js";
import type { Hold } from "../front/quota.js";
import type { StoredAnswer } from "../store/records.js";

/** Envelope version (docs/api.md, "Envelope"). */
export const ENVELOPE_VERSION = "1";

export interface Envelope {
  version: typeof ENVELOPE_VERSION;
  data: unknown;
  error: { code: string; message: string; param?: string; problems?: Array<{ param: string; message: string }> } | null;
  metadata: Record<string, unknown> & { request_id: string; processing_time_ms: number };
}

/**
 * Data already serialised to JSON text, for hot paths that cache their serialisation
 * (JSON.stringify of a full IP record costs ~1.5 µs per request).
 */
export class RawJson {
  constructor(readonly json: string) {}
}

/** A number as JSON.stringify writes it (null for NaN and the infinities), for answers written by hand. */
export function jsonNumber(x: number): string {
  return Number.isFinite(x) ? `${x}` : "null";
}

/** A success that is not JSON (GET /metrics: the Prometheus text format), sent as is. */
export class RawText {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

/**
 * Per-response state kept by the router: abort flag, request id, start time. The request id is
 * always `[A-Za-z0-9._:-]` (acceptRequestId), so it is written into JSON without escaping.
 */
export interface ResponseState {
  aborted: boolean;
  requestId: string;
  startedAt: number;
  /** `METHOD /pattern` of the matched route, for metrics and the access log (unset: no route matched). */
  route?: string;
  /** CORS headers for every answer of this request (beacon routes). */
  cors?: Record<string, string>;
  /** Credits held for this call until it is charged or fails (router.ts, QuotaGate.hold). */
  hold?: Hold | null;
  /** The Idempotency-Key this request claimed (idempotency.ts), until its answer is stored or it fails. */
  idem?: Extract<Claim, { kind: "claimed" }> | null;
  /** The answer RouteContext.recordAnswer rendered: the one to store (`answer`) and the one to send (`body`). */
  recorded?: { answer: StoredAnswer; status: number; body: string } | null;
  /** The body this request is reading or holds (body.ts); released when the answer is written or the client leaves. */
  lease?: { release(): void; reown?(id: string): void } | null;
  /** Close the connection after the answer (a body cut by its deadline: its client may still be sending). */
  close?: boolean;
  /** A HEAD request: every answer goes out with its status, headers and length, without the body. */
  head?: boolean;
  /** On a cluster node, the body read while a record was fetched from the store (router.ts, StoreWait), and the waits so far. */
  body?: Promise<Buffer>;
  waits?: number;
}

/** Milliseconds since `startedAt`, rounded to microseconds. */
export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}

/**
 * Writes status, headers and the JSON envelope inside one cork. No-op if the client went away.
 */
export function writeEnvelope(
  res: HttpResponse,
  state: ResponseState,
  status: number,
  envelope: Envelope,
  headers?: Record<string, string>,
): void {
  writeBody(res, state, status, JSON.stringify(envelope), headers);
}

/**
 * Writes JSON text that is not an envelope (routes with `envelope: false`, e.g. GET
 * /openapi.json), with the same headers as an envelope.
 */
export function writeJsonText(res: HttpResponse, state: ResponseState, status: number, json: string, headers?: Record<string, string>): void {
  writeBody(res, state, status, json, headers);
}

/** Writes a RawText success with its own content type. */
export function writeRawText(res: HttpResponse, state: ResponseState, status: number, raw: RawText, headers?: Record<string, string>): void {
  writeBody(res, state, status, raw.text, headers, raw.contentType);
}

/** Writes an already serialised envelope. 200 is uWS's default status, so it is not written. */
function writeBody(res: HttpResponse, state: ResponseState, status: number, body: string, headers?: Record<string, string>, contentType = "application/json"): void {
  if (state.lease) {
    state.lease.release();
    state.lease = null;
  }
  if (state.aborted) return;
  state.aborted = true; // a response is written once
  recordAnswer(state, status);
  pending.res = res;
  pending.state = state;
  pending.status = status;
  pending.body = body;
  pending.headers = headers;
  pending.contentType = contentType;
  res.cork(writeCorked);
}

/**
 * The answer writeBody is writing, for writeCorked: uWS runs a cork's callback at once, so one
 * module-level slot and one function serve every answer instead of a closure per answer.
 */
const pending: { res: HttpResponse | null; state: ResponseState | null; status: number; body: string; headers: Record<string, string> | undefined; contentType: string } = {
  res: null,
  state: null,
  status: 200,
  body: "",
  headers: undefined,
  contentType: "",
};

function writeCorked(): void {
  const { res, state, status, body, headers, contentType } = pending;
  pending.res = null;
  pending.state = null;
  pending.body = "";
  pending.headers = undefined;
  if (!res || !state) return;
  if (status !== 200) res.writeStatus(STATUS_TEXT[status] ?? `${status}`);
  res.writeHeader("content-type", contentType);
  res.writeHeader("x-request-id", state.requestId);
  if (headers) for (const k in headers) res.writeHeader(k, headers[k]!);
  if (state.head === true) res.endWithoutBody(Buffer.byteLength(body), state.close === true);
  else res.end(body, state.close === true);
}

/**
 * Writes a success envelope. `metadataJson` holds extra metadata fields already serialised
 * (`"k":v,...` without braces), for hot paths whose metadata is mostly constant.
 */
export function writeData(
  res: HttpResponse,
  state: ResponseState,
  status: number,
  data: unknown,
  metadata?: Record<string, unknown>,
  metadataJson?: string,
  headers?: Record<string, string>,
): void {
  writeBody(res, state, status, renderData(state, data, metadata, metadataJson), headers);
}

/** The text of a success envelope, as writeData sends it (stored for Idempotency-Key replays). */
export function renderData(state: ResponseState, data: unknown, metadata?: Record<string, unknown>, metadataJson?: string): string {
  if (data instanceof RawJson && metadata === undefined) {
    const extra = metadataJson ? `,${metadataJson}` : "";
    return `{"version":"${ENVELOPE_VERSION}","data":${data.json},"error":null,"metadata":{"request_id":"${state.requestId}","processing_time_ms":${elapsedMs(state.startedAt)}${extra}}}`;
  }
  const meta = { request_id: state.requestId, processing_time_ms: elapsedMs(state.startedAt), ...metadata };
  const base = JSON.stringify({ version: ENVELOPE_VERSION, data: data instanceof RawJson ? null : data, error: null, metadata: meta });
  // RawJson data with object metadata: splice the raw text in place of the null placeholder.
  const body = data instanceof RawJson ? base.replace('"data":null', `"data":${data.json}`) : base;
  return metadataJson ? `${body.slice(0, -2)},${metadataJson}}}` : body;
}

/** Writes an envelope already rendered (renderData, or a stored Idempotency-Key answer). */
export function writeRendered(res: HttpResponse, state: ResponseState, status: number, body: string, headers?: Record<string, string>): void {
  writeBody(res, state, status, body, headers);
}

/** Answers a HEAD request: status and headers, no body. */
export function writeHead(res: HttpResponse, state: ResponseState, status: number): void {
  if (state.aborted) return;
  state.aborted = true;
  recordAnswer(state, status);
  res.cork(() => {
    if (status !== 200) res.writeStatus(STATUS_TEXT[status] ?? `${status}`);
    res.writeHeader("content-type", "application/json");
    res.writeHeader("x-request-id", state.requestId);
    res.endWithoutBody();
  });
}

/** Writes an error envelope from an ApiError (its headers and metadata included). */
export function writeError(res: HttpResponse, state: ResponseState, err: ApiError, extra?: Record<string, unknown>, headers?: Record<string, string>): void {
  writeEnvelope(
    res,
    state,
    err.status,
    {
      version: ENVELOPE_VERSION,
      data: null,
      error: { code: err.code, message: err.message, ...(err.param === undefined ? {} : { param: err.param }), ...(err.problems === undefined ? {} : { problems: err.problems }) },
      metadata: { request_id: state.requestId, processing_time_ms: elapsedMs(state.startedAt), ...err.metadata, ...extra },
    },
    headers ? { ...headers, ...err.headers } : err.headers,
  );
}
