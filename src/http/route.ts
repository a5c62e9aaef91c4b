import type { ZodType } from "zod";
import type { AuthRequirement, KeyPrincipal } from "./auth.js";
import type { RequestSnapshot } from "./request.js";

export type Method = "get" | "post" | "patch" | "put" | "del";

/** What a handler sees: the snapshot, the validated body, the caller, and the request's clock. */
export interface RouteContext<B> {
  snap: RequestSnapshot;
  body: B;
  /** Set on secret/publishable routes. */
  principal: KeyPrincipal | null;
  /** Epoch ms used for quota periods and expiry (injectable in test mode). */
  nowMs: number;
  requestId: string;
  /** performance.now() when the request arrived (for answers that state their own time). */
  startedAt: number;
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
}

/** One endpoint: method, uWS pattern, who may call it, its body schema, and the handler. */
export interface Route<B = unknown> {
  method: Method;
  pattern: string;
  auth: AuthRequirement;
  body?: ZodType<B>;
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
  };
  /**
   * Least credits a successful call costs. They are held (QuotaGate.hold) before the handler
   * runs: a call the org has no room for is refused (429) before it does or records anything,
   * and an admitted call is not refused for these credits afterwards. Only what a call charges
   * beyond them is checked again at charge time.
   */
  minCredits?: number;
  /**
   * A beacon endpoint called from browsers: the snapshot carries Origin, User-Agent,
   * X-Forwarded-For and the peer address; CORS preflights are answered and every answer carries
   * Access-Control-Allow-Origin for the caller's origin (the handler refuses origins the project
   * does not allow, with ORIGIN_NOT_ALLOWED, which goes out without it).
   */
  beacon?: boolean;
  handle(ctx: RouteContext<B>): RouteResult | Promise<RouteResult>;
}

/** Helps TypeScript infer B from the body schema. */
export function defineRoute<B = undefined>(route: Route<B>): Route<B> {
  return route;
}
