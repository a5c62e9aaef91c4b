/**
 * The error catalogue: every code the API can answer with, its HTTP status and what it means.
 * The error table of docs/api.md ("Errors") is checked against this list by test/unit/errors.test.ts.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: { status: 400, meaning: "Invalid request format; the message names the failing field path." },
  INVALID_SIGNATURE: { status: 400, meaning: "Webhook: the Stripe-Signature header does not verify against the raw body, or its timestamp is more than 300 s old or ahead; nothing was applied." },
  MISSING_KEY: { status: 401, meaning: "No Authorization header." },
  INVALID_KEY: { status: 401, meaning: "Invalid API key (unknown, malformed, or wrong admin token)." },
  EXPIRED_KEY: { status: 401, meaning: "API key expired." },
  KEY_DISABLED: { status: 403, meaning: "API key disabled." },
  INSUFFICIENT_SCOPE: { status: 403, meaning: "The secret key lacks the capability this endpoint needs: a scope, or live mode (a test key)." },
  KEY_TYPE_NOT_ALLOWED: { status: 403, meaning: "A publishable key used on a server endpoint, or a secret key on a beacon endpoint." },
  FORBIDDEN: { status: 403, meaning: "A publishable key that is not bound to a project (a resource of another org answers 404 NOT_FOUND)." },
  ORIGIN_NOT_ALLOWED: { status: 403, meaning: "Beacon call from a page origin the project does not allow (allowed_origins), or a beacon write without an Origin to a project that lists them." },
  NOT_FOUND: { status: 404, meaning: "No such route or resource." },
  METHOD_NOT_ALLOWED: { status: 405, meaning: "The route exists but not for this method; see the Allow header." },
  REQUEST_TIMEOUT: { status: 408, meaning: "The request body did not arrive in time (FS_BODY_TIMEOUT_MS, FS_BODY_MIN_BYTES_PER_SECOND); the connection is closed and nothing was run or charged." },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, meaning: "A request with the same Idempotency-Key is still being processed; retry once it has been answered." },
  ALREADY_SUBSCRIBED: { status: 409, meaning: "Checkout for an org that already has a live subscription; use the billing portal to change it." },
  NO_BILLING_ACCOUNT: { status: 409, meaning: "Billing portal: the org has no Stripe customer yet; start with POST /v1/orgs/{orgId}/billing/checkout." },
  LIMIT_EXCEEDED: { status: 409, meaning: "The org has as many projects (FS_MAX_PROJECTS_PER_ORG), API keys (FS_MAX_KEYS_PER_ORG) or webhook endpoints (FS_WEBHOOK_ENDPOINTS_MAX) as this installation allows; the message names the limit and its setting. Nothing was created: delete one first, or ask the operator to raise the setting." },
  DATASET_SWITCH_FAILED: { status: 409, meaning: "Admin: the requested dataset build could not be opened; the previous build stays in service." },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: "Request body larger than FS_MAX_BODY_BYTES." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: "A body was sent without Content-Type: application/json." },
  MISSING_REQUIRED_DATA: { status: 422, meaning: "No analyzable data provided." },
  IDEMPOTENCY_KEY_REUSED: { status: 422, meaning: "The Idempotency-Key was used in the last 24 hours for another request (method, path, query or body differ); use a new key." },
  QUOTA_EXCEEDED: { status: 429, meaning: "Quota or rate limit exceeded; metadata.ratelimit says when it resets." },
  RATE_LIMITED: {
    status: 429,
    meaning:
      "Too many requests from this client address, project, key or org for an unmetered route (beacon writes, feedback, the demo, a second traffic report or policy replay of an org while one runs), or from an org's test-mode keys (a second or a UTC day); see the RateLimit and Retry-After headers.",
  },
  INTERNAL_ERROR: { status: 500, meaning: "Server error. Nothing internal is leaked; the request id is logged." },
  NOT_IMPLEMENTED: { status: 501, meaning: "An endpoint that is announced and not live yet (or a preview this installation has not switched on); the message names it. Nothing was charged." },
  PAYMENT_PROVIDER_ERROR: { status: 502, meaning: "Stripe failed or timed out; nothing was changed here. Retry later." },
  BILLING_NOT_CONFIGURED: { status: 503, meaning: "Billing is not configured on this installation (STRIPE_SECRET_KEY, price ids, webhook secret)." },
  OVERLOADED: { status: 503, meaning: "Too much work at once: the scoring pool queue is full, or too many request bodies are being received (FS_BODY_BUFFER_*); retry after the Retry-After header." },
  NOT_READY: { status: 503, meaning: "Cannot serve right now: datasets, writer or pool unavailable (GET /readyz), or charges cannot be recorded (stopping, storage failure); nothing was charged." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** HTTP status line text for each status we use. */
export const STATUS_TEXT: Record<number, string> = {
  200: "200 OK",
  201: "201 Created",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  408: "408 Request Timeout",
  409: "409 Conflict",
  413: "413 Payload Too Large",
  415: "415 Unsupported Media Type",
  422: "422 Unprocessable Entity",
  429: "429 Too Many Requests",
  500: "500 Internal Server Error",
  501: "501 Not Implemented",
  502: "502 Bad Gateway",
  503: "503 Service Unavailable",
};

/**
 * An expected failure with a catalogue code and a message safe to show the client.
 * `headers` and `metadata` travel into the response (Allow, Retry-After, ratelimit).
 */
/**
 * The `WWW-Authenticate` challenge of each 401 (RFC 6750, section 3): a request without a key
 * gets the bare scheme; a key that is unknown, malformed or expired gets `error="invalid_token"`.
 */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  MISSING_KEY: 'Bearer realm="fraudscore"',
  INVALID_KEY: 'Bearer realm="fraudscore", error="invalid_token"',
  EXPIRED_KEY: 'Bearer realm="fraudscore", error="invalid_token", error_description="The key has expired"',
};

/** One problem of a request's input: where (`body.email`, `query.limit`, `path.ip`, `header.idempotency-key`) and what. */
export interface InputProblem {
  param: string;
  message: string;
}

/** The input a message names first (`body.email: ...` -> `body.email`), for VALIDATION_ERROR. */
const PARAM_PREFIX = /^((?:body|query|path|header)(?:\.[^\s:]+)?): /;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  readonly metadata: Record<string, unknown> | undefined;
  /** The input at fault (VALIDATION_ERROR): given, or read from the message's `param: ` prefix. */
  readonly param: string | undefined;
  /**
   * Every problem found (VALIDATION_ERROR), the first one being `param`'s: a schema's list, or the
   * one problem a check outside a schema found (`param: message`), so every VALIDATION_ERROR that
   * names its input has the same shape whether a schema or a handler found it.
   */
  readonly problems: InputProblem[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    extra?: { headers?: Record<string, string>; metadata?: Record<string, unknown>; param?: string; problems?: InputProblem[] },
  ) {
    // An expected failure needs no stack: capturing one costs microseconds per refused request
    // (a flood of bad keys should be cheap). INTERNAL_ERROR keeps the original error for the log.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = "ApiError";
    this.code = code;
    this.status = statusOf(code);
    const challenge = CHALLENGES[code];
    this.headers = challenge ? { ...extra?.headers, "www-authenticate": challenge } : extra?.headers;
    this.metadata = extra?.metadata;
    const param = extra?.param ?? (code === "VALIDATION_ERROR" ? PARAM_PREFIX.exec(message)?.[1] : undefined);
    this.param = param;
    this.problems = extra?.problems ?? (param !== undefined && message.startsWith(`${param}: `) ? [{ param, message: message.slice(param.length + 2) }] : undefined);
  }
}

/** Exhaustive map from code to HTTP status. */
export function statusOf(code: ErrorCode): number {
  return ERROR_CATALOGUE[code].status;
}
