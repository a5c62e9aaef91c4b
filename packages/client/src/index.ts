/**
 * @fraudscore/client: a typed client for the fraudscore API. Its types are generated from the
 * service's OpenAPI document (schema.ts, by scripts/client-generate.ts), so every route, body and
 * answer is typed without being written here.
 */
export { createClient, type ApiResult, type ClientOptions, type FraudscoreClient } from "./client.js";
export { FraudscoreError } from "./errors.js";
export type { RetryOptions } from "./retry.js";
export type { components, operations, paths } from "./schema.js";
export type { CallOptions, ClientErrorCode, Method, PathsWith, RequestOptions, ResponseData, ResponseMetadata, ServiceErrorCode } from "./types.js";
export { createProtector, DEFAULT_SIGNALS_FIELD, type ProtectOptions, type Submission, type Verdict } from "./protect.js";
export { verifyWebhook, Webhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from "./webhooks.js";
