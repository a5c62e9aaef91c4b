import { FraudscoreError } from "./errors.js";
import { backoffMs, isRetryableStatus, parseRetryAfter, sleep, type RetryOptions } from "./retry.js";
import type { paths } from "./schema.js";
import type { ClientErrorCode, Method, PathsWith, RequestOptions, ResponseData, ResponseMetadata } from "./types.js";

/** Settings of a client. */
export interface ClientOptions {
  /** The service's base URL, e.g. `https://fraudscore.example.com`. */
  baseUrl: string;
  /** A secret key (`fs_live_…`, `fs_test_…`), a publishable key, or the admin token; sent as a bearer token. */
  apiKey?: string;
  /** Milliseconds one attempt may take before it is abandoned (default 10000). */
  timeoutMs?: number;
  /** Retries on 429, 503, 409 IDEMPOTENCY_KEY_IN_USE, timeouts and network errors. */
  retry?: RetryOptions;
  /** The fetch to use (default: the runtime's global fetch). */
  fetch?: typeof fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

/** A call's outcome: the unwrapped `data`, or a FraudscoreError. Never throws for an API error. */
export type ApiResult<T> =
  | { ok: true; data: T; status: number; requestId: string; metadata: ResponseMetadata | null; headers: Headers; error?: undefined }
  | { ok: false; error: FraudscoreError; data?: undefined };

type Args<P extends keyof paths, M extends Method> = {} extends RequestOptions<P, M> ? [options?: RequestOptions<P, M>] : [options: RequestOptions<P, M>];

/** A typed client: one method per HTTP method, every path and body typed from the OpenAPI document. */
export interface FraudscoreClient {
  request<M extends Method, P extends PathsWith<M>>(method: M, path: P, ...args: Args<P, M>): Promise<ApiResult<ResponseData<P, M>>>;
  get<P extends PathsWith<"get">>(path: P, ...args: Args<P, "get">): Promise<ApiResult<ResponseData<P, "get">>>;
  post<P extends PathsWith<"post">>(path: P, ...args: Args<P, "post">): Promise<ApiResult<ResponseData<P, "post">>>;
  put<P extends PathsWith<"put">>(path: P, ...args: Args<P, "put">): Promise<ApiResult<ResponseData<P, "put">>>;
  patch<P extends PathsWith<"patch">>(path: P, ...args: Args<P, "patch">): Promise<ApiResult<ResponseData<P, "patch">>>;
}

interface LooseOptions {
  path?: Record<string, string | number>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * A client for one service and key. Depends on nothing but `fetch`, `AbortController` and
 * `crypto.randomUUID` (Node 20+, Bun, Deno, browsers and edge runtimes).
 * @example
 * const fs = createClient({ baseUrl: "https://fraudscore.example.com", apiKey: process.env.FS_KEY });
 * const r = await fs.post("/v1/check", { body: { form_id: "signup", metadata: { email } } });
 * if (r.ok && r.data.decision === "block") reject();
 */
export function createClient(options: ClientOptions): FraudscoreClient {
  const call = (method: Method, path: string, opts: LooseOptions = {}) => send(options, method, path, opts);
  const client = {
    request: (method: Method, path: string, opts?: LooseOptions) => call(method, path, opts),
    get: (path: string, opts?: LooseOptions) => call("get", path, opts),
    post: (path: string, opts?: LooseOptions) => call("post", path, opts),
    put: (path: string, opts?: LooseOptions) => call("put", path, opts),
    patch: (path: string, opts?: LooseOptions) => call("patch", path, opts),
  };
  return client as unknown as FraudscoreClient;
}

/** `/v1/ip/{ip}` with its path parameters filled in and the query appended. */
export function buildUrl(baseUrl: string, path: string, params: LooseOptions["path"], query: LooseOptions["query"]): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new TypeError(`missing path parameter '${name}' for ${path}`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const qs = search.toString();
  return baseUrl.replace(/\/+$/, "") + filled + (qs ? `?${qs}` : "");
}

async function send(options: ClientOptions, method: Method, path: string, opts: LooseOptions): Promise<ApiResult<unknown>> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.retry?.maxRetries ?? 2;
  const baseDelay = options.retry?.baseDelayMs ?? 250;
  const maxDelay = options.retry?.maxDelayMs ?? 30_000;
  const wait = options.retry?.sleep ?? sleep;
  const timeoutMs = opts.timeoutMs ?? options.timeoutMs ?? 10_000;
  const url = buildUrl(options.baseUrl, path, opts.path, opts.query);
  const headers: Record<string, string> = { accept: "application/json", ...options.headers, ...opts.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  // One key for the call and all its retries: the service runs and charges it once.
  if (method === "post") headers["idempotency-key"] = opts.idempotencyKey ?? globalThis.crypto.randomUUID();

  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(doFetch, url, { method: method.toUpperCase(), headers, body }, timeoutMs, opts.signal);
    const result = "response" in outcome ? await readAnswer(outcome.response, attempt) : { ok: false as const, error: clientError(outcome.code, outcome.cause, attempt) };
    if (result.ok || attempt > maxRetries || !shouldRetry(result.error, opts.signal)) return result;
    const delay = result.error.retryAfterMs ?? backoffMs(attempt - 1, baseDelay, maxDelay);
    if (delay > maxDelay) return result;
    try {
      await wait(delay, opts.signal);
    } catch (cause) {
      return { ok: false, error: clientError("ABORTED", cause, attempt) };
    }
  }
}

function shouldRetry(error: FraudscoreError, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return false;
  if (error.status === 0) return error.code === "TIMEOUT" || error.code === "NETWORK_ERROR";
  return isRetryableStatus(error.status) && (error.status !== 409 || error.code === "IDEMPOTENCY_KEY_IN_USE");
}

type Attempt = { response: Response } | { code: ClientErrorCode; cause: unknown };

/** One fetch bounded by `timeoutMs` and the caller's signal. */
async function attemptOnce(doFetch: typeof fetch, url: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined): Promise<Attempt> {
  if (signal?.aborted) return { code: "ABORTED", cause: signal.reason };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no answer within ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const response = await doFetch(url, { ...init, signal: controller.signal });
    // The body is read under the same timeout.
    const text = await response.text();
    return { response: new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers }) };
  } catch (cause) {
    return { code: timedOut ? "TIMEOUT" : signal?.aborted ? "ABORTED" : "NETWORK_ERROR", cause };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** The envelope unwrapped: `data` on a success, a FraudscoreError from `error` otherwise. */
async function readAnswer(response: Response, attempts: number): Promise<ApiResult<unknown>> {
  const headerId = response.headers.get("x-request-id");
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  let body: any;
  try {
    body = JSON.parse(await response.text());
  } catch (cause) {
    const message = `HTTP ${response.status} with a body that is not JSON`;
    return { ok: false, error: new FraudscoreError({ code: "INVALID_RESPONSE", message, status: response.status, requestId: headerId, retryAfterMs, attempts, cause }) };
  }
  const enveloped = body !== null && typeof body === "object" && "version" in body && "metadata" in body;
  const requestId: string | null = (enveloped ? body.metadata?.request_id : null) ?? headerId;
  if (response.ok) {
    return { ok: true, data: enveloped ? body.data : body, status: response.status, requestId: requestId ?? "", metadata: enveloped ? body.metadata : null, headers: response.headers };
  }
  const error = enveloped && body.error ? body.error : { code: "INVALID_RESPONSE", message: `HTTP ${response.status} without the error envelope` };
  return { ok: false, error: new FraudscoreError({ code: error.code, message: error.message, status: response.status, requestId, retryAfterMs, attempts }) };
}

function clientError(code: ClientErrorCode, cause: unknown, attempts: number): FraudscoreError {
  const message = code === "TIMEOUT" ? "No answer within the timeout" : code === "ABORTED" ? "The call was aborted" : "The service could not be reached";
  return new FraudscoreError({ code, message, status: 0, requestId: null, retryAfterMs: null, attempts, cause });
}
