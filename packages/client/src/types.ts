/**
 * Types derived from the generated `paths` (schema.ts): which paths take which method, and for
 * one operation its path and query parameters, its JSON body and the `data` of its success.
 * Nothing here names a route: every route's types come from the OpenAPI document.
 */
import type { components, paths } from "./schema.js";

/** HTTP methods the API uses, as OpenAPI keys them. */
export type Method = "get" | "post" | "put" | "patch" | "delete";

/** Paths that have an operation for `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

/** The operation object of `M` on `P`. */
export type Operation<P extends keyof paths, M extends Method> = Extract<paths[P][M], { responses: unknown }>;

type ParamsOf<O> = O extends { parameters: infer X } ? X : Record<string, never>;
type Present<T> = [Exclude<T, undefined>] extends [never] ? never : Exclude<T, undefined>;
type PathParamsOf<O> = Present<ParamsOf<O> extends { path?: infer X } ? X : never>;
type QueryOf<O> = Present<ParamsOf<O> extends { query?: infer X } ? X : never>;
type BodyObject<RB> = RB extends { content: { "application/json": infer B } } ? B : never;
type JsonBody<O> = O extends { requestBody?: infer RB } ? BodyObject<Exclude<RB, undefined>> : never;

/** Options every call takes. */
export interface CallOptions {
  /** Extra request headers (e.g. `X-Request-Id`). */
  headers?: Record<string, string>;
  /**
   * The Idempotency-Key of a POST; by default a fresh UUID per call, reused by its retries, so a
   * retried call is run and charged once.
   */
  idempotencyKey?: string;
  /** Aborts the call, its retries and their waits. */
  signal?: AbortSignal;
  /** Milliseconds each attempt may take (default: the client's `timeoutMs`). */
  timeoutMs?: number;
}

/** What a call of `M` on `P` takes: path parameters, query and body as the document declares them. */
export type RequestOptions<P extends keyof paths, M extends Method> = CallOptions &
  ([PathParamsOf<Operation<P, M>>] extends [never] ? { path?: undefined } : { path: PathParamsOf<Operation<P, M>> }) &
  ([QueryOf<Operation<P, M>>] extends [never] ? { query?: undefined } : { query?: QueryOf<Operation<P, M>> }) &
  ([JsonBody<Operation<P, M>>] extends [never] ? { body?: undefined } : { body: JsonBody<Operation<P, M>> });

type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : never;
type SuccessBody<O> = O extends { responses: infer Rs } ? JsonOf<Rs[Extract<keyof Rs, 200 | 201>]> : never;

/** The answer's `data` (the envelope unwrapped), or the whole body for answers outside it (GET /openapi.json). */
export type ResponseData<P extends keyof paths, M extends Method> =
  SuccessBody<Operation<P, M>> extends { data: infer D; error: null } ? D : SuccessBody<Operation<P, M>>;

/** The envelope's `metadata` of a success (request id, processing time, credits...). */
export type ResponseMetadata = { request_id: string; processing_time_ms: number } & Record<string, unknown>;

/** Error codes the service answers with (the catalogue in its OpenAPI document). */
export type ServiceErrorCode = components["schemas"]["ErrorEnvelope"]["error"]["code"];

/**
 * Codes of failures that never reached an answer: TIMEOUT (an attempt took longer than
 * `timeoutMs`), NETWORK_ERROR (fetch failed: refused, reset, DNS), ABORTED (the caller's signal),
 * INVALID_RESPONSE (an answer that is not the API's JSON envelope, e.g. a proxy's HTML page).
 */
export type ClientErrorCode = "TIMEOUT" | "NETWORK_ERROR" | "ABORTED" | "INVALID_RESPONSE";
