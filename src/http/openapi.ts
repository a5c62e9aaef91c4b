/**
 * The OpenAPI 3.1 document of the API, built from the routing table: each route's method,
 * pattern, auth and body schema, plus its `docs` (route.ts RouteDocs: response schema, metadata,
 * credits, handler errors, parameters, an example). Built once when the routing table is built
 * (routes/openapi.get.ts serves it pre-serialised), never per request.
 *
 * Schemas are JSON Schema 2020-12 (OpenAPI 3.1's dialect) converted from zod with
 * z.toJSONSchema: request bodies and parameters as input (defaults make a field optional),
 * answers as output, where a plain z.object allows no other properties, so an answer that grows
 * a field the schema lacks fails the integration tests' contract check
 * (test/integration/helpers/server.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z, type ZodType } from "zod";
import { REPO_ROOT, type Config } from "../config/index.js";
import { ERROR_CATALOGUE, type ErrorCode } from "../shared/errors.js";
import { ENVELOPE_VERSION } from "./respond.js";
import type { ApiTag, Method, Route } from "./route.js";
import { API_DESCRIPTION, HEADERS, IDEMPOTENCY_KEY_PARAM, REQUEST_ID_PARAM, SECURITY_SCHEMES, TAGS, TEST_NOW_PARAM } from "./openapi-components.js";
import { isIdempotent } from "../front/idempotency.js";
import { pathParams } from "./inputs.js";
import { observationResponse } from "./schemas/beacon.js";

/** A JSON Schema (2020-12) object as it appears in the document. */
export type JsonSchema = Record<string, unknown>;

/** The document; typed loosely beyond the top level (tests check it against the OpenAPI schema). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Array<{ url: string; description?: string }>;
  tags: Array<{ name: ApiTag; description: string }>;
  paths: Record<string, Partial<Record<HttpMethod, OpenApiOperation>>>;
  components: Record<string, Record<string, unknown>>;
  /**
   * Endpoints this installation routes but does not serve yet (announced ones, a preview switched
   * off): each answers 501 NOT_IMPLEMENTED in the error envelope. Not operations, since they have
   * no success answer; listed so that a client can tell them from unknown paths.
   */
  "x-announced"?: AnnouncedEndpoint[];
}

/** One entry of the document's `x-announced`. */
export interface AnnouncedEndpoint {
  method: string;
  path: string;
  summary: string;
  description: string;
}

/** The licence of the service and of this document (package.json's). */
const LICENSE = { name: "Apache-2.0", identifier: "Apache-2.0" };

/** Lower-case HTTP method names as OpenAPI path items key them. */
export type HttpMethod = "get" | "post" | "patch" | "put" | "delete" | "head" | "options";

/** One operation, with the fields the tests read typed. */
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: ApiTag[];
  security: Array<Record<string, string[]>>;
  parameters: Array<Record<string, unknown>>;
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema; example?: unknown }> };
  /** The success inline; errors as references into components.responses (shared by routes). */
  responses: Record<string, ResponseObject | { $ref: string }>;
  "x-credits"?: readonly number[];
}

/** An OpenAPI response object. */
export interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: JsonSchema; example?: unknown }>;
}

/** What the document states about the installation besides its routes. */
export interface OpenApiOptions {
  /** `info.version`: the package version. */
  version: string;
  /**
   * FS_TEST_CLOCK: every operation takes X-FS-Test-Now, and answers 400 VALIDATION_ERROR for a
   * value that is not epoch milliseconds.
   */
  testClock: boolean;
  /** FS_PUBLIC_URL, the document's server; without it the server is "/" (the document's own host). */
  publicUrl?: string | undefined;
  /** FS_DEMO: the demo page and its two calls are served (static.ts). */
  demo?: boolean;
}

/** The options for this installation: the package version and the settings the document states. */
export function openApiOptions(config: Pick<Config, "FS_TEST_CLOCK" | "FS_PUBLIC_URL"> & Partial<Pick<Config, "FS_DEMO">>): OpenApiOptions {
  return { version: packageVersion(), testClock: config.FS_TEST_CLOCK, publicUrl: config.FS_PUBLIC_URL, demo: config.FS_DEMO ?? false };
}

/** `version` of the repository's package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version?: unknown };
  if (typeof pkg.version !== "string") throw new Error("package.json has no version");
  return pkg.version;
}

/** OpenAPI path template of a uWS pattern: `/v1/ip/:ip` -> `/v1/ip/{ip}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

export { pathParams };

const HTTP_METHOD: Record<Method, HttpMethod> = { get: "get", post: "post", patch: "patch", put: "put", del: "delete" };

/** The OpenAPI method name of a route's method. */
export function openApiMethod(method: Method): HttpMethod {
  return HTTP_METHOD[method];
}

/**
 * Every error code a route can answer with, in catalogue order: the handler's own (docs.errors)
 * plus those the router adds from the route's definition (router.ts): authentication, body
 * reading and validation, the quota hold and charge, the test clock, and INTERNAL_ERROR.
 */
export function errorCodesOf(route: Route<any>, testClock: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.docs.errors);
  const auth = route.auth;
  if (auth.kind !== "none") codes.add("MISSING_KEY").add("INVALID_KEY");
  if (auth.kind === "secret" || auth.kind === "publishable") codes.add("EXPIRED_KEY").add("KEY_DISABLED").add("KEY_TYPE_NOT_ALLOWED");
  if (auth.kind === "secret" && (auth.scope || auth.live)) codes.add("INSUFFICIENT_SCOPE");
  // Bodies are read against the body budget (body-budget.ts): 503 OVERLOADED when the pool or
  // the client's share is full; 408 REQUEST_TIMEOUT when a slow body is cut (body-deadline.ts).
  // Path parameters and queries are read by their schemas (inputs.ts).
  if (route.params || route.query) codes.add("VALIDATION_ERROR");
  if (route.body) codes.add("VALIDATION_ERROR").add("REQUEST_TIMEOUT").add("UNSUPPORTED_MEDIA_TYPE").add("PAYLOAD_TOO_LARGE").add("OVERLOADED");
  if (route.rawBody) codes.add("REQUEST_TIMEOUT").add("PAYLOAD_TOO_LARGE").add("OVERLOADED");
  // Held before the handler runs (429) and charged before the answer (429 for credits beyond
  // the hold, 503 when the charge cannot be recorded).
  if (route.minCredits) codes.add("QUOTA_EXCEEDED").add("NOT_READY");
  // A test-mode key's calls are counted against its org's test-mode budget instead (429).
  if (route.minCredits && (auth.kind === "secret" || auth.kind === "publishable")) codes.add("RATE_LIMITED");
  if (testClock && route.envelope !== false) codes.add("VALIDATION_ERROR");
  // Idempotency-Key (idempotency.ts): a malformed key, a key in use or reused, an answer not stored.
  if (isIdempotent(route)) codes.add("VALIDATION_ERROR").add("IDEMPOTENCY_KEY_IN_USE").add("IDEMPOTENCY_KEY_REUSED").add("NOT_READY");
  codes.add("INTERNAL_ERROR");
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((c) => codes.has(c));
}

/** Whether a route's error answers state `metadata.credits: 0` (router.ts failRequest). */
export function statesCreditsOnError(route: Route<any>): boolean {
  return Boolean(route.minCredits || route.beacon);
}

/**
 * Builds the document for a routing table.
 * @throws Error when a route's docs contradict its definition (a bug: the service should not start).
 * @example const doc = buildOpenApiDocument(allRoutes(deps), openApiOptions(deps.config));
 */
export function buildOpenApiDocument(routes: readonly Route<any>[], options: OpenApiOptions): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  const errorResponses: Record<string, ResponseObject> = { [UWS_431]: HEADERS_TOO_LARGE };
  const announced: AnnouncedEndpoint[] = [];
  const used = new Set<ApiTag>();
  for (const route of routes) {
    checkDocs(route);
    const path = openApiPath(route.pattern);
    if (route.docs.response === null) {
      announced.push({ method: route.method.toUpperCase(), path, summary: route.docs.summary, description: route.docs.description });
      continue;
    }
    used.add(route.docs.tag);
    const item = (paths[path] ??= {});
    const method = openApiMethod(route.method);
    if (item[method]) throw new Error(`openapi: ${method.toUpperCase()} ${path} is defined twice`);
    const op = operationOf(route, options, errorResponses);
    item[method] = op;
    // HEAD wherever GET works (router.ts), and the CORS preflight of beacon routes.
    if (route.method === "get") item.head = headOf(op, route.minCredits !== undefined && route.minCredits > 0);
    if (route.beacon) item.options = preflightOf(route, op);
  }
  for (const [path, ops] of Object.entries(pageOperations(options, errorResponses))) {
    paths[path] = ops;
    for (const op of Object.values(ops)) for (const tag of op.tags) used.add(tag);
  }
  return {
    openapi: "3.1.0",
    info: { title: "fraudscore API", version: options.version, description: API_DESCRIPTION, license: LICENSE },
    servers: [options.publicUrl ? { url: options.publicUrl } : { url: "/", description: "The host that served this document." }],
    tags: (Object.keys(TAGS) as ApiTag[]).filter((name) => used.has(name)).map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      parameters: { RequestId: REQUEST_ID_PARAM, IdempotencyKey: IDEMPOTENCY_KEY_PARAM, ...(options.testClock ? { TestNow: TEST_NOW_PARAM } : {}) },
      headers: HEADERS,
      responses: errorResponses,
      schemas: { ErrorEnvelope: toJsonSchema(ANY_ERROR, "output") },
    },
    ...(announced.length > 0 ? { "x-announced": announced } : {}),
  };
}

const HEAD_METERED = "The key, its capability, the limits and the inputs are checked as for GET; the lookup is neither run nor charged, and a 200 has no Content-Length.";

/** HEAD of a GET operation: its statuses and headers, no body (a metered one is not run). */
function headOf(get: OpenApiOperation, metered: boolean): OpenApiOperation {
  const responses: OpenApiOperation["responses"] = {};
  for (const [status, r] of Object.entries(get.responses)) {
    if (status === "default" || "$ref" in r) responses[status] = { description: status === "default" ? "Any other error: its status and headers, no body." : `As GET answers ${status}, without the body.` };
    else responses[status] = { description: r.description, ...(r.headers ? { headers: r.headers } : {}) };
  }
  responses["431"] = { $ref: `#/components/responses/${UWS_431}` };
  return { ...get, operationId: get.operationId.replace(/^get/, "head"), summary: `${get.summary} (status and headers only)`, description: metered ? HEAD_METERED : "What GET answers, without the body (load balancers' health checks, a key's check).", responses };
}

/** The CORS preflight the router answers for a beacon route (router.ts). */
function preflightOf(route: Route<any>, op: OpenApiOperation): OpenApiOperation {
  return {
    operationId: op.operationId.replace(/^[a-z]+/, "options"),
    summary: `CORS preflight of ${route.method.toUpperCase()} ${openApiPath(route.pattern)}`,
    description: "Answered without a key, so for any origin (a preflight cannot name the project): Access-Control-Allow-Origin for the request's Origin, the methods on the path, the headers a call may send (authorization, content-type, x-request-id), Access-Control-Max-Age 7200. The call itself is refused, without Access-Control-Allow-Origin, when the project does not allow the origin.",
    tags: op.tags,
    security: [],
    parameters: op.parameters.filter((p) => p.in === "path"),
    responses: {
      "204": { description: "The preflight's answer (no body).", headers: { "Access-Control-Allow-Origin": { schema: { type: "string" } }, "Access-Control-Allow-Methods": { schema: { type: "string" } }, "Access-Control-Max-Age": { schema: { type: "integer" } } } },
      "431": { $ref: `#/components/responses/${UWS_431}` },
    },
  };
}

/** A page's GET with its HEAD beside it: the same statuses and headers, without a body. */
function withHead(item: { get: OpenApiOperation }): { get: OpenApiOperation; head: OpenApiOperation } {
  const responses: OpenApiOperation["responses"] = {};
  for (const [status, answer] of Object.entries(item.get.responses)) responses[status] = "$ref" in answer ? answer : { description: `As GET answers ${status}, without the body.` };
  return { ...item, head: { ...item.get, operationId: item.get.operationId.replace(/^get/, "head"), summary: `${item.get.summary} (status and headers only)`, responses } };
}

/** A non-JSON answer: its media type and a string schema. */
const page = (description: string, type: string, extra: Partial<ResponseObject> = {}): ResponseObject => ({ description, content: { [type]: { schema: { type: "string" } } }, ...extra });

/** The endpoints static.ts serves that are not API routes: the beacon script, the icon, the billing return pages, the demo. */
function pageOperations(options: OpenApiOptions, errorResponses: Record<string, ResponseObject>): OpenApiDocument["paths"] {
  const tooLarge = { $ref: `#/components/responses/${UWS_431}` };
  const op = (operationId: string, summary: string, description: string, responses: OpenApiOperation["responses"], extra: Partial<OpenApiOperation> = {}): OpenApiOperation => ({
    operationId,
    summary,
    description,
    tags: ["pages"],
    security: [],
    parameters: [],
    responses: { ...responses, "431": tooLarge },
    ...extra,
  });
  const script = {
    "200": page("The beacon script: gzip when accepted, an ETag, cached a day (stale-while-revalidate a week), Access-Control-Allow-Origin *.", "text/javascript"),
    "304": { description: "Not modified (If-None-Match matched the ETag)." },
    "503": page("The script has not been built (`npm run build`).", "application/json"),
  };
  const paths: OpenApiDocument["paths"] = {
    "/js/fs.js": {
      get: op("getJsFsJs", "The beacon script", "The browser beacon (docs/api.md, \"The beacon script\"): one script tag with the project's publishable key.", script),
      head: op("headJsFsJs", "The beacon script (status and headers only)", "What GET answers, without the body, with the length GET would send.", { "200": { description: "As GET answers 200, without the body." }, "304": script["304"], "503": { description: "The script has not been built." } }),
    },
    "/favicon.ico": withHead({ get: op("getFaviconIco", "The service's icon", "An SVG icon.", { "200": page("The icon.", "image/svg+xml") }) }),
    "/billing/success": withHead({ get: op("getBillingSuccess", "Stripe Checkout's default return page", "Where the checkout's default success_url leads: says the subscription is being set up and links to the dashboard.", { "200": page("The page.", "text/html") }) }),
    "/billing/canceled": withHead({ get: op("getBillingCanceled", "Stripe Checkout's default cancel page", "Where the checkout's default cancel_url leads: says nothing was charged and links to the dashboard.", { "200": page("The page.", "text/html") }) }),
  };
  if (options.demo) {
    // The demo's errors are the API's envelope; each client address's demo calls are limited
    // (FS_DEMO_SUBMIT_LIMIT, FS_DEMO_READ_LIMIT; static.ts).
    const error = (status: number, code: ErrorCode) => {
      const name = `${status}.${code}`;
      errorResponses[name] ??= errorResponse(status, [code], false);
      return { $ref: `#/components/responses/${name}` };
    };
    const limited = { "429": error(429, "RATE_LIMITED") };
    const reads = "Limited per client address with GET /demo/observations (FS_DEMO_READ_LIMIT), then 429 RATE_LIMITED.";
    paths["/demo"] = withHead({
      get: op("getDemo", "The demo page", `A contact form with the demo project's beacon, and this visit's observation in words (FS_DEMO). ${reads}`, { "200": page("The page.", "text/html"), ...limited }),
    });
    paths["/demo/submit"] = {
      post: op(
        "postDemoSubmit",
        "Send the demo form",
        "The demo's site backend: POST /v1/check on the submission for the demo org (not charged, not kept), and the page with its verdict and the visit's observations in words, once the beacon's report of the submission is stored (waited for up to 2 s). Limited per client address (FS_DEMO_SUBMIT_LIMIT), then 429 RATE_LIMITED before the form is read.",
        { "200": page("The verdict page.", "text/html"), "413": error(413, "PAYLOAD_TOO_LARGE"), ...limited },
        { requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: { type: "object", additionalProperties: { type: "string" } } } } } },
      ),
    };
    paths["/demo/observations"] = {
      get: op(
        "getDemoObservations",
        "The demo visit's observations",
        `The demo project's latest observations of one beacon session (at most 10), each with a summary and its reasons in words. Feeds the demo page. ${reads.replace("with GET /demo/observations", "with GET /demo")}`,
        {
          "200": { description: "The session's observations, newest first.", content: { "application/json": { schema: toJsonSchema(DEMO_OBSERVATIONS, "output") } } },
          "400": error(400, "VALIDATION_ERROR"),
          ...limited,
        },
        { parameters: [{ name: "session_id", in: "query", required: true, schema: { type: "string" }, example: "s_2pkfbaHoeLUv6hAPxQ9m" }] },
      ),
    };
  }
  return paths;
}

/** components.responses name of what uWebSockets.js answers itself to an oversized request head. */
const UWS_431 = "431.uWebSockets";
const HEADERS_TOO_LARGE: ResponseObject = {
  description:
    "The request line or headers are over about 4 KB. Answered by uWebSockets.js itself, before the service sees the request: no envelope and no X-Request-Id (docs/api.md, \"What uWebSockets.js answers itself\").",
};

const RATELIMIT = z
  .object({
    limit: z.number().int().min(0).describe("Credits the plan includes per period."),
    remaining: z.number().int().min(0),
    reset: z.number().int().describe("Epoch ms when the period resets."),
    reset_in_seconds: z.number().int().min(0),
  })
  .describe("Why the call was refused and when the quota resets.");

const ENVELOPE_META = {
  request_id: z.string().describe("The request id (also the X-Request-Id header)."),
  processing_time_ms: z.number().min(0).describe("Time from arrival to answer, in milliseconds."),
};

/** GET /demo/observations's answer (static.ts): each observation in words, and as the API lists it. */
const DEMO_OBSERVATIONS = z.object({
  version: z.literal(ENVELOPE_VERSION),
  data: z.object({
    items: z
      .array(z.object({ summary: z.string(), explained: z.array(z.string()).describe("Each reason in words."), observation: observationResponse }))
      .max(10)
      .describe("Newest first."),
  }),
  error: z.null(),
  metadata: z.object(ENVELOPE_META),
});

/** The success envelope of a route (its `data` schema, metadata and credits); the data alone without the envelope. */
function successSchema(route: Route<any>): ZodType {
  const d = route.docs;
  if (!d.response) throw new Error(`openapi: ${route.pattern} has no response schema`);
  if (route.envelope === false) return d.response;
  const meta: Record<string, ZodType> = { ...ENVELOPE_META };
  if (d.credits) {
    // A test-mode key's calls cost nothing (router.ts answer()); only key routes take one.
    const keyed = route.auth.kind === "secret" || route.auth.kind === "publishable";
    const stated = keyed && !d.credits.includes(0) ? [...d.credits, 0] : d.credits;
    meta.credits = z.literal(stated as number[]).describe(keyed ? "Credits this call cost; 0 with a test-mode key." : "Credits this call cost.");
  }
  Object.assign(meta, d.metadata);
  return z.object({ version: z.literal(ENVELOPE_VERSION), data: d.response, error: z.null(), metadata: z.object(meta) });
}

/** The error envelope for some codes; `extra` is the metadata beyond request_id and processing_time_ms. */
function errorEnvelope(codes: ErrorCode[], extra: Record<string, ZodType>): ZodType {
  return z.object({
    version: z.literal(ENVELOPE_VERSION),
    data: z.null(),
    error: z.object({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string().describe("For people; do not parse it."),
      param: z.string().optional().describe("VALIDATION_ERROR: the input at fault, as `body.<path>`, `query.<name>`, `path.<name>` or `header.<name>`."),
      problems: z
        .array(z.object({ param: z.string(), message: z.string() }))
        .optional()
        .describe("VALIDATION_ERROR with a `param`: every problem found, the first being `param`'s (one when it was found against stored state or after the schema)."),
    }),
    metadata: z.object({ ...ENVELOPE_META, ...extra }),
  });
}

/**
 * Any error answer, whatever the route: for readers, and for answers to paths and methods the
 * document does not list (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED).
 */
const ANY_ERROR = errorEnvelope(Object.keys(ERROR_CATALOGUE) as ErrorCode[], {
  credits: z.literal(0).optional().describe("On metered and beacon routes: a failed call costs nothing."),
  ratelimit: RATELIMIT.optional().describe("With 429 QUOTA_EXCEEDED."),
}).describe("The error envelope; each operation lists its own codes and metadata per status.");

const EXAMPLE_META = { request_id: "req_4fQ9x2LmT7aZ_1c", processing_time_ms: 0.41 };

/**
 * One route's operation. Its error answers go into `errorResponses` (components.responses),
 * one entry per status, codes and metadata, which most routes share.
 */
function operationOf(route: Route<any>, options: OpenApiOptions, errorResponses: Record<string, ResponseObject>): OpenApiOperation {
  const d = route.docs;
  const op: OpenApiOperation = {
    operationId: operationId(route),
    summary: d.summary,
    description: descriptionOf(route),
    tags: [d.tag],
    security: securityOf(route),
    parameters: parametersOf(route, options),
    responses: {},
  };
  const body = route.body ?? (route.rawBody ? d.rawBody : undefined);
  if (body) {
    op.requestBody = {
      required: true,
      content: { "application/json": { schema: toJsonSchema(body, "input"), ...(d.example.body !== undefined ? { example: d.example.body } : {}) } },
    };
  }
  if (d.response) {
    const status = d.status ?? 200;
    op.responses[String(status)] = {
      description: status === 201 ? "Created." : "OK.",
      headers: {
        "X-Request-Id": { $ref: "#/components/headers/RequestId" },
        ...(isIdempotent(route) ? { "Idempotent-Replayed": { $ref: "#/components/headers/IdempotentReplayed" } } : {}),
        // Metered answers state the org's quota standing (quota.ts rateLimitHeaders).
        ...(d.credits?.some((c) => c > 0) && !route.beacon
          ? { "RateLimit-Policy": { $ref: "#/components/headers/RateLimitPolicy" }, RateLimit: { $ref: "#/components/headers/RateLimit" } }
          : {}),
      },
      content: { [d.contentType ?? "application/json"]: { schema: toJsonSchema(successSchema(route), "output"), example: successExample(route) } },
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route, options.testClock)) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const credits = statesCreditsOnError(route);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // e.g. "401.MISSING_KEY.INVALID_KEY.EXPIRED_KEY.credits"
    const name = [status, ...codes, ...(credits ? ["credits"] : [])].join(".");
    errorResponses[name] ??= errorResponse(status, codes, credits);
    op.responses[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  op.responses["431"] = { $ref: `#/components/responses/${UWS_431}` };
  // Every other answer is an error in the envelope (the statuses above list this route's own codes).
  op.responses.default = {
    description: "Any other error, in the error envelope; the statuses above list this operation's own.",
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
  };
  if (d.credits) op["x-credits"] = d.credits;
  return op;
}

/** The error answer with one of `codes` (all of one status); `credits`: it states `credits: 0`. */
function errorResponse(status: number, codes: ErrorCode[], credits: boolean): ResponseObject {
  const extra: Record<string, ZodType> = {};
  if (credits) extra.credits = z.literal(0).describe("A failed call costs nothing.");
  // The quota's standing; a route's own rate limit states its standing in headers instead.
  if (codes.includes("QUOTA_EXCEEDED")) extra.ratelimit = codes.includes("RATE_LIMITED") ? RATELIMIT.optional() : RATELIMIT;
  const limited = codes.includes("RATE_LIMITED");
  const retry = limited || codes.some((c) => c === "QUOTA_EXCEEDED" || c === "OVERLOADED" || c === "NOT_READY");
  return {
    description: codes.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].meaning}`).join("\n\n"),
    headers: {
      "X-Request-Id": { $ref: "#/components/headers/RequestId" },
      ...(retry ? { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } : {}),
      ...(status === 401 ? { "WWW-Authenticate": { $ref: "#/components/headers/WwwAuthenticate" } } : {}),
      ...(limited ? { "RateLimit-Policy": { $ref: "#/components/headers/RouteRateLimitPolicy" }, RateLimit: { $ref: "#/components/headers/RouteRateLimit" } } : {}),
    },
    content: { "application/json": { schema: toJsonSchema(errorEnvelope(codes, extra), "output"), example: errorExample(codes[0]!, credits) } },
  };
}

/** e.g. `GET /v1/orgs/:orgId/usage` -> `getV1OrgsOrgIdUsage`. */
function operationId(route: Route<any>): string {
  const words = route.pattern.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return openApiMethod(route.method) + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

function descriptionOf(route: Route<any>): string {
  const d = route.docs;
  const notes: string[] = [d.description];
  if (d.credits) notes.push(`Credits: ${d.credits.join(" or ")} per successful call${route.minCredits ? "; a failed call costs nothing" : ""}.`);
  if (route.beacon) notes.push("Called from browsers: CORS preflights are answered, and answers carry Access-Control-Allow-Origin for the calling origin (except ORIGIN_NOT_ALLOWED).");
  if (route.method === "get") notes.push(route.minCredits ? "HEAD checks the key and the inputs as GET does, and is neither run nor charged." : "HEAD is answered too, with the status and headers only.");
  return notes.join("\n\n");
}

function securityOf(route: Route<any>): Array<Record<string, string[]>> {
  const auth = route.auth;
  switch (auth.kind) {
    case "admin":
      return [{ adminToken: [] }];
    case "secret":
      return [{ secretKey: auth.scope ? [auth.scope] : [] }];
    case "publishable":
      return [{ publishableKey: [] }];
    case "none":
      return route.rawBody?.headers.includes("stripe-signature") ? [{ stripeSignature: [] }] : [];
  }
}

function parametersOf(route: Route<any>, options: OpenApiOptions): Array<Record<string, unknown>> {
  // The schemas the router validates with (inputs.ts): one declaration feeds both.
  const d = route.docs;
  const params: Array<Record<string, unknown>> = [];
  for (const name of pathParams(route.pattern)) params.push(parameter(name, "path", (route.params as Record<string, ZodType>)[name]!, true, d.example.params?.[name]));
  for (const [name, schema] of Object.entries((route.query ?? {}) as Record<string, ZodType>)) params.push(parameter(name, "query", schema, false, d.example.query?.[name]));
  params.push({ $ref: "#/components/parameters/RequestId" });
  if (isIdempotent(route)) params.push({ $ref: "#/components/parameters/IdempotencyKey" });
  if (options.testClock && route.envelope !== false) params.push({ $ref: "#/components/parameters/TestNow" });
  return params;
}

function parameter(name: string, where: "path" | "query", schema: ZodType, required: boolean, example: string | undefined): Record<string, unknown> {
  const { description, ...json } = toJsonSchema(schema, "input");
  return {
    name,
    in: where,
    required,
    ...(typeof description === "string" ? { description } : {}),
    schema: json,
    ...(example !== undefined ? { example: typedExample(json, example) } : {}),
  };
}

/** A parameter's example as its schema types it: a query string's "20" is the integer 20 to a linter. */
function typedExample(schema: Record<string, unknown>, example: string): string | number {
  return (schema.type === "integer" || schema.type === "number") && example.trim() !== "" && Number.isFinite(Number(example)) ? Number(example) : example;
}

function successExample(route: Route<any>): unknown {
  const ex = route.docs.example;
  if (route.envelope === false) return ex.response;
  const credits = route.docs.credits ? { credits: route.docs.credits[0] } : {};
  return { version: ENVELOPE_VERSION, data: ex.response, error: null, metadata: { ...EXAMPLE_META, ...credits, ...ex.metadata } };
}

function errorExample(code: ErrorCode, credits: boolean): unknown {
  const metadata: Record<string, unknown> = { ...EXAMPLE_META };
  if (credits) metadata.credits = 0;
  if (code === "QUOTA_EXCEEDED") metadata.ratelimit = { limit: 10_000, remaining: 0, reset: 1_767_225_600_000, reset_in_seconds: 86_400 };
  return { version: ENVELOPE_VERSION, data: null, error: { code, message: ERROR_CATALOGUE[code].meaning }, metadata };
}

/**
 * A zod schema as a JSON Schema 2020-12 object to embed in the document. `$schema` is dropped
 * (the document's dialect applies), and so are the safe-integer bounds zod gives every integer
 * (noise in every schema). `$defs` would resolve against the document's root, so a schema that
 * needs them (a recursive one) is refused.
 */
export function toJsonSchema(schema: ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "throw" }) as JsonSchema;
  if ("$defs" in json) throw new Error("openapi: a schema needs $defs (recursive or shared by id), which the document cannot embed");
  dropSafeIntegerBounds(json);
  return json;
}

function dropSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropSafeIntegerBounds(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const o = node as Record<string, unknown>;
  if (o.type === "integer") {
    if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
    if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  }
  for (const value of Object.values(o)) dropSafeIntegerBounds(value);
}

/** Checks that a route's docs agree with its definition; a disagreement is a bug in the route. */
function checkDocs(route: Route<any>): void {
  const where = `openapi: ${route.method.toUpperCase()} ${route.pattern}`;
  const d = route.docs;
  const params = pathParams(route.pattern);
  for (const name of Object.keys(route.params ?? {})) if (!params.includes(name)) throw new Error(`${where}: params.${name} is not in the pattern`);
  for (const name of params) if (!route.params?.[name]) throw new Error(`${where}: path parameter ${name} has no schema in params`);
  for (const name of Object.keys(d.example.params ?? {})) if (!params.includes(name)) throw new Error(`${where}: example.params.${name} is not in the pattern`);
  if ((d.response === null) !== (d.example.response === undefined)) throw new Error(`${where}: give example.response exactly when there is a response schema`);
  if (route.rawBody && route.body) throw new Error(`${where}: rawBody and body are exclusive`);
  if (d.rawBody && !route.rawBody) throw new Error(`${where}: docs.rawBody without rawBody`);
  if (route.envelope === false && ((route.auth.kind !== "none" && route.auth.kind !== "admin") || route.body || route.rawBody || route.method !== "get")) {
    throw new Error(`${where}: envelope: false is for GET routes without a body, unauthenticated or for the admin token`);
  }
  if (d.contentType && route.envelope !== false) throw new Error(`${where}: docs.contentType is for routes with envelope: false`);
}
