/**
 * The fixed parts of the OpenAPI document (openapi.ts): its description, tags, security
 * schemes, and the headers every operation shares.
 */
import { ENVELOPE_VERSION } from "./respond.js";
import type { ApiTag } from "./route.js";

/** `info.description`: what every answer has in common. */
export const API_DESCRIPTION = [
  "Traffic risk scoring: IP intelligence, form checks, e-mail and content scoring, session resolution, and a browser beacon with bot policies.",
  "",
  `Every answer is one JSON envelope: \`{ "version": "${ENVELOPE_VERSION}", "data", "error", "metadata": { "request_id", "processing_time_ms", ... } }\`, with exactly one of \`data\` and \`error\` non-null; \`error\` is \`{ "code", "message" }\`. GET /openapi.json is the one exception: it answers this document itself.`,
  "",
  "Metered calls state what they cost in `metadata.credits`; a failed call costs nothing and says `credits: 0`. A call past a hard quota answers 429 QUOTA_EXCEEDED with `metadata.ratelimit` and Retry-After.",
  "",
  "A path that is not listed here answers 404 NOT_FOUND, and a listed path called with another method 405 METHOD_NOT_ALLOWED with an Allow header, both in the error envelope (components.schemas.ErrorEnvelope). Every answer carries X-Request-Id: the caller's own when it sent a short, plain one, otherwise a generated one.",
].join("\n");

/** The operation groups, in the order tools list them. */
export const TAGS: Record<ApiTag, string> = {
  ip: "IP address intelligence.",
  scoring: "Risk of form submissions (the check and its deep analysis), e-mail addresses and text; proof-of-work challenges.",
  sessions: "Accounts bound to browser sessions, fingerprints and networks; the login and signup pre-flight; metering.",
  beacon: "Endpoints the browser beacon calls with a publishable key (CORS).",
  projects: "A project's observations and bot policy.",
  usage: "Credits used and the quota.",
  billing: "Stripe Checkout, the billing portal and Stripe's webhook.",
  admin: "Operator endpoints (admin token): orgs, projects, keys, usage corrections, datasets.",
  webhooks: "An org's outbound webhook endpoints (Standard Webhooks) and their delivery logs: with the org's secret key, or the admin token under /v1/admin.",
  health: "Liveness and readiness probes.",
  announced: "Endpoints announced and not live yet: each answers 501 NOT_IMPLEMENTED.",
  meta: "This document.",
  pages: "What the service serves besides the API: the beacon script, its icon, Stripe Checkout's return pages and the demo (not JSON).",
};

/** How callers authenticate: the four kinds of credentials (auth.ts, http/routes/billing.ts). */
export const SECURITY_SCHEMES = {
  secretKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "fs_live_…",
    description: "A secret key (`Authorization: Bearer fs_live_…`), kept server-side. Some endpoints need a scope on the key (`sessions`, `billing`), listed in their security requirement.",
  },
  publishableKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "fs_pub_live_…",
    description: "A project's publishable key (`Authorization: Bearer fs_pub_live_…`), for the beacon endpoints called from browsers; accepted only from the project's allowed origins.",
  },
  adminToken: {
    type: "http",
    scheme: "bearer",
    description: "The operator's admin token (FS_ADMIN_TOKEN).",
  },
  stripeSignature: {
    type: "apiKey",
    in: "header",
    name: "Stripe-Signature",
    description: "Stripe's signature over the raw body, checked with the webhook secret (STRIPE_WEBHOOK_SECRET).",
  },
};

/** The X-Request-Id request header every operation accepts (request.ts acceptRequestId). */
export const REQUEST_ID_PARAM = {
  name: "X-Request-Id",
  in: "header",
  required: false,
  description: "Your id for this request, echoed in X-Request-Id and metadata.request_id when it is 1-128 characters of [A-Za-z0-9._:-].",
  schema: { type: "string", maxLength: 128 },
};

/** Idempotency-Key, on POST operations called with a secret key or the admin token (idempotency.ts). */
export const IDEMPOTENCY_KEY_PARAM = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Your key for this request (1-255 printable ASCII characters, e.g. a UUID). The first successful answer is stored; a retry with the same key and the same method, path, query and body within 24 hours gets that answer again (header Idempotent-Replayed: true), with nothing run or charged again. The same key with another request answers 422 IDEMPOTENCY_KEY_REUSED; while the first request runs, 409 IDEMPOTENCY_KEY_IN_USE. Errors are not stored: a retry runs again. Non-ASCII bytes at either end of the value are dropped by the HTTP layer before the key is read (docs/api.md, \"Idempotent requests\"): use ASCII.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/** The test clock header, on installations with FS_TEST_CLOCK. */
export const TEST_NOW_PARAM = {
  name: "X-FS-Test-Now",
  in: "header",
  required: false,
  description: "Test mode only (FS_TEST_CLOCK): epoch milliseconds that replace the clock for this request.",
  schema: { type: "string", pattern: "^[0-9]+$" },
};

/** Response headers the operations refer to. */
export const HEADERS = {
  RequestId: { description: "The request id (also metadata.request_id).", schema: { type: "string" } },
  RetryAfter: { description: "Seconds to wait before retrying.", schema: { type: "string", pattern: "^[0-9]+$" } },
  WwwAuthenticate: {
    description: 'The Bearer challenge (RFC 6750): `Bearer realm="fraudscore"` without a key, with `error="invalid_token"` for an unknown, malformed or expired one.',
    schema: { type: "string", pattern: '^Bearer realm="fraudscore"' },
  },
  IdempotentReplayed: { description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
  RateLimitPolicy: {
    description: 'The org\'s monthly credit quota (IETF httpapi RateLimit fields): `"monthly";q=<credits>;w=<period seconds>`. Absent for unmetered plans.',
    schema: { type: "string", pattern: '^"monthly";q=[0-9]+;w=[0-9]+$' },
  },
  RateLimit: {
    description: 'Credits left in the period and seconds until it resets, after this call: `"monthly";r=<credits>;t=<seconds>`. Absent for unmetered plans.',
    schema: { type: "string", pattern: '^"monthly";r=[0-9]+;t=[0-9]+$' },
  },
  RouteRateLimitPolicy: {
    description: 'With 429 RATE_LIMITED: the limit reached (IETF httpapi RateLimit fields), `"<limit>";q=<calls>;w=<window seconds>`; for the beacon `"address"` (per client address) or `"project"`, for the demo `"submit"` or `"demo"` (its pages, per client address), for a test-mode key\'s org `"test"` (a second) or `"test-daily"` (a UTC day), for a traffic report or policy replay `"reports"` (one at a time per org).',
    schema: { type: "string", pattern: '^"[a-z-]+";q=[0-9]+;w=[0-9]+$' },
  },
  RouteRateLimit: {
    description: 'With 429 RATE_LIMITED: `"<limit>";r=0;t=<seconds until a call is allowed again>` (also Retry-After).',
    schema: { type: "string", pattern: '^"[a-z-]+";r=[0-9]+;t=[0-9]+$' },
  },
};
