import type { z, ZodType } from "zod";
import type { AuthRequirement, KeyPrincipal } from "../front/auth.js";
import type { ErrorCode } from "../shared/errors.js";
import type { RequestSnapshot } from "./request.js";
import type { CheckHistoryRecord, StoredAnswer } from "../store/records.js";

export type Method = "get" | "post" | "patch" | "put" | "del";

/** Schemas of a route's path or query parameters, by name. */
export type InputShape = Record<string, ZodType>;

/** The values a handler gets for an InputShape: each schema's output, by name. */
export type InputsOf<S extends InputShape> = { [K in keyof S]: z.output<S[K]> };

/**
 * What a handler sees: the snapshot, the validated body, path parameters and query, the caller,
 * and the request's clock.
 */
export interface RouteContext<B, P extends InputShape = {}, Q extends InputShape = {}> {
  snap: RequestSnapshot;
  body: B;
  /** Path parameters, percent-decoded and parsed by the route's `params` schemas. */
  params: InputsOf<P>;
  /** Query parameters the route declares (`query`), decoded and parsed; others are ignored. */
  query: InputsOf<Q>;
  /** Set on secret/publishable routes. */
  principal: KeyPrincipal | null;
  /** Epoch ms used for quota periods and expiry (injectable in test mode). */
  nowMs: number;
  requestId: string;
  /** performance.now() when the request arrived (for answers that state their own time). */
  startedAt: number;
  /**
   * Set when the request claimed an Idempotency-Key: renders the success answer now, for the
   * handler to store with its effect in one commit (an intent's `answer`, or the journal line of
   * a usage adjustment), so that a crash can never keep the effect and lose the answer. `replay`
   * is what a replay shows instead of `data` (without what must not be stored, such as a new
   * key's plain text). The handler then returns `recorded`; the router sends this answer.
   */
  recordAnswer?: (status: number, data: unknown, replay?: unknown) => StoredAnswer;
}

/** A handler's answer. `credits` > 0 is debited from the caller's org before the response goes out. */
export interface RouteResult {
  status?: number;
  data: unknown;
  metadata?: Record<string, unknown>;
  /** Extra metadata already serialised (`"k":v,...`, no braces), for hot paths; see writeData. */
  metadataJson?: string;
  credits?: number;
  /** Beacon endpoints: counted but never refused for quota (docs/api.md, "Credits and quota"). */
  neverBlock?: boolean;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /**
   * The answer ctx.recordAnswer rendered is durable with the effect: committed by the writer
   * (`seq` null) or journaled as charge-journal record `seq`. The router sends that answer.
   */
  recorded?: { seq: number | null };
  /**
   * What a replay of this answer (same Idempotency-Key) shows as `data` instead of `data`: the
   * answer stored for the key is rendered from it, with the same status and metadata, so that a
   * secret shown in this answer (a webhook's signing secret) is stored nowhere with it.
   */
  replay?: unknown;
  /** A check's record for its org's history (its test scope's for a test key), journaled with the debit (of 0 credits for a test key). */
  history?: CheckHistoryRecord;
}

/**
 * One endpoint: method, uWS pattern, who may call it, the schemas of its inputs, and the handler.
 * The router validates every input with these schemas before the handler runs (a failure is 400
 * VALIDATION_ERROR naming `path.<name>`, `query.<name>` or `body.<path>`), and GET /openapi.json
 * documents them: one declaration feeds both.
 */
export interface Route<B = unknown, P extends InputShape = any, Q extends InputShape = any> {
  method: Method;
  pattern: string;
  auth: AuthRequirement;
  body?: ZodType<B>;
  /**
   * Path parameters by name (`:orgId` -> `orgId`): one schema for each of the pattern's, parsing
   * the percent-decoded segment (a string); `ctx.params` holds what they output.
   */
  params?: P;
  /**
   * Query parameters by name: schemas of the decoded value (a string; absent: undefined, so give
   * each `.optional()` or a default). A parameter given twice is refused; others are ignored.
   */
  query?: Q;
  /**
   * The body is handed to the handler unparsed (`ctx.body` is the Buffer, any content type), with
   * these request headers in `ctx.snap.extra`: for endpoints that verify a signature over the
   * exact bytes (Stripe's webhook). Exclusive with `body`.
   */
  rawBody?: {
    headers: string[];
    /** Body limit for this route instead of FS_MAX_BODY_BYTES. */
    maxBytes?: number;
    /**
     * Runs before the body is read (it sees the snapshot, with `headers` in `extra`); throwing an
     * ApiError answers at once, so a request that cannot succeed never has its body held.
     */
    precheck?: (snap: RequestSnapshot) => void;
    /**
     * `webhook`: on a route without a key, the body counts against the webhook pool
     * (FS_BODY_BUFFER_WEBHOOK_BYTES) instead of the public one, so that keyless senders of large
     * bodies cannot take what the beacon and the sign-in need.
     */
    pool?: "webhook";
  };
  /**
   * Runs after authentication and before the body is read; throwing an ApiError answers at once.
   * For refusals that need no body (the beacon's rate limits), so a refused call holds no body
   * bytes and costs no parsing.
   */
  admit?: (snap: RequestSnapshot, principal: KeyPrincipal | null, nowMs: number) => void;
  /**
   * Least credits a successful call costs. They are held (QuotaGate.hold) before the handler
   * runs: a call the org has no room for is refused (429) before it does or records anything,
   * and an admitted call is not refused for these credits afterwards. Only what a call charges
   * beyond them is checked again at charge time.
   */
  minCredits?: number;
  /**
   * Says from the parsed inputs that this call costs nothing (a bogon lookup): then nothing is
   * held before the handler, so an org at its quota still gets the free answer.
   */
  free?: (inputs: { params: InputsOf<P>; body: B; snap: RequestSnapshot }) => boolean;
  /**
   * A beacon endpoint called from browsers: the snapshot carries Origin, User-Agent,
   * X-Forwarded-For and the peer address; CORS preflights are answered and every answer carries
   * Access-Control-Allow-Origin for the caller's origin (the handler refuses origins the project
   * does not allow, with ORIGIN_NOT_ALLOWED, which goes out without it).
   */
  beacon?: boolean;
  /**
   * The snapshot carries the peer address and, from a trusted proxy, X-Forwarded-For, so the
   * handler can name the caller's address (TrustedProxies.clientIp; GET /v1/ip/me).
   */
  clientAddress?: boolean;
  /**
   * false: a success answers `data` itself (a RawJson or RawText) instead of the envelope; errors
   * still go out in the envelope. Only for documents that tools read at the top level (GET
   * /openapi.json, GET /metrics); such a route is a GET without a body, unauthenticated or for
   * the admin token.
   */
  envelope?: false;
  /** The route's contract as GET /openapi.json states it (src/http/openapi.ts). */
  docs: RouteDocs;
  handle(ctx: RouteContext<B, P, Q>): RouteResult | Promise<RouteResult>;
}

/** Tags that group the operations of GET /openapi.json; described in src/http/openapi.ts. */
export type ApiTag = "ip" | "scoring" | "sessions" | "beacon" | "projects" | "usage" | "billing" | "admin" | "webhooks" | "health" | "announced" | "meta" | "pages";

/**
 * What the OpenAPI document says about one route, kept on the route itself so its contract lives
 * in one place. The request side comes from the route (method, pattern, auth, `body`, `params`, `query`); this adds
 * the rest. Used when the document is built at start, never per request.
 */
export interface RouteDocs {
  /** One line, e.g. "Look up an IP address". */
  summary: string;
  /** What the call does and when it fails (CommonMark). */
  description: string;
  tag: ApiTag;
  /**
   * Schema of `data` in a success answer (of the whole body with `envelope: false`); null for a
   * route that has no success answer on this installation (a preview that is switched off).
   */
  response: ZodType | null;
  /** Media type of a success with `envelope: false` when it is not JSON (GET /metrics). */
  contentType?: string;
  /** Status of a success; 200 unless the route creates something. */
  status?: 200 | 201;
  /** Metadata fields a success adds besides request_id, processing_time_ms and credits. */
  metadata?: Record<string, ZodType>;
  /**
   * Every value `metadata.credits` can take on a success, e.g. [2], or [1, 2] when an
   * enrichment may cost one more. Given exactly when the route states its credits (key routes).
   */
  credits?: readonly number[];
  /**
   * Error codes the handler itself can answer with. The generator adds those of the router:
   * authentication, body reading and validation, quota, INTERNAL_ERROR.
   */
  errors: readonly ErrorCode[];
  /** Schema of a `rawBody` route's body, which is not parsed by the router (documentation only). */
  rawBody?: ZodType;
  /** One call and its answer; checked against the schemas by test/unit/openapi.test.ts. */
  example: RouteExample;
}

/** An example call: what to send and the success answer's `data` (and route metadata). */
export interface RouteExample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** `data` of the answer (the whole body with `envelope: false`); absent when `response` is null. */
  response?: unknown;
  /** The metadata fields of `RouteDocs.metadata`, as the example call answers them. */
  metadata?: Record<string, unknown>;
}

/** Helps TypeScript infer B, P and Q from the route's schemas. */
export function defineRoute<B = undefined, P extends InputShape = {}, Q extends InputShape = {}>(route: Route<B, P, Q>): Route<B, P, Q> {
  return route;
}
