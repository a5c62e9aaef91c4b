import { z } from "zod";
import { WEBHOOK_EVENTS } from "../../store/records.js";

/*
 * Outbound webhooks (docs/integrations.md, "Webhooks"): the org's endpoints and their delivery
 * logs, under /v1/orgs/{orgId}/webhooks (the org's secret key) and /v1/admin/orgs/{orgId}/webhooks
 * (the admin token).
 */

/** `{webhookId}`. */
export const webhookIdParam = z.string().max(64).describe("The webhook endpoint's id (we_...).");

/** An endpoint URL: absolute, https (or http with FS_WEBHOOK_ALLOW_HTTP), no credentials; the route checks the scheme. */
const url = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), { message: "must not carry credentials (user:password@)" })
  .describe(
    "Where deliveries are POSTed: an https URL (http only where the operator allows it, FS_WEBHOOK_ALLOW_HTTP) on a public address (private ones only where the operator allows them, FS_WEBHOOK_ALLOW_PRIVATE).",
  );

const events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .refine((e) => new Set(e).size === e.length, { message: "lists an event twice" })
  .describe(
    'The events sent to this endpoint. Each delivery\'s body is `{ type, timestamp, data }`; `data.livemode` is false for an event a test-mode key (fs_test_…, fs_pub_test_…) caused, true otherwise (docs/integrations.md, "Webhooks").',
  );

/** POST .../webhooks */
export const createWebhookBody = z.strictObject({ url, events, enabled: z.boolean().optional().describe("Default true.") });

/** PATCH .../webhooks/{webhookId} */
export const patchWebhookBody = z
  .strictObject({ url: url.optional(), events: events.optional(), enabled: z.boolean().optional() })
  .refine((b) => b.url !== undefined || b.events !== undefined || b.enabled !== undefined, { message: "give at least one of url, events, enabled" });

/** Most and default seconds the old secret of a roll keeps signing. */
export const WEBHOOK_ROLL_GRACE_MAX_SECONDS = 7 * 86_400;
export const WEBHOOK_ROLL_GRACE_DEFAULT_SECONDS = 86_400;

/** POST .../webhooks/{webhookId}/roll-secret */
export const rollWebhookBody = z.strictObject({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(WEBHOOK_ROLL_GRACE_MAX_SECONDS)
    .optional()
    .describe(
      `How long the old secret keeps signing beside the new one, in seconds (0: it stops at once; at most ${WEBHOOK_ROLL_GRACE_MAX_SECONDS}, 7 days). Default ${WEBHOOK_ROLL_GRACE_DEFAULT_SECONDS} (a day).`,
    ),
});

/** An endpoint as the API shows it: never its secret but when the secret is made. */
export const webhookResponse = z.object({
  id: z.string(),
  org_id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  enabled: z.boolean(),
  created_at: z.string().describe("ISO 8601."),
  pending: z.number().int().describe("Events waiting for delivery to this endpoint."),
  previous_secret_expires_at: z
    .string()
    .nullable()
    .describe("Until when a rolled-away secret still signs beside the current one (ISO 8601); null when none does."),
});

/** The answer of create and roll: the endpoint with its secret, shown this once. */
export const webhookWithSecretResponse = webhookResponse.extend({
  secret: z
    .string()
    .nullable()
    .describe("The signing secret (whsec_…, Standard Webhooks): only in the first answer; null in a replay (Idempotency-Key): it was shown once."),
  secret_already_shown: z
    .boolean()
    .describe("true in a replay of this call: the secret was shown in the first answer and is not shown again; roll it if it was lost."),
});

export const webhookListResponse = z.object({ items: z.array(webhookResponse) });

export const deletedWebhookResponse = z.object({ id: z.string(), deleted: z.literal(true) });

/** One delivery attempt of the endpoint's log. */
export const webhookAttemptResponse = z.object({
  webhook_id: z.string().describe("The message's `webhook-id` (msg_…): the same on every attempt of one event."),
  type: z.enum(WEBHOOK_EVENTS),
  at: z.string().describe("ISO 8601."),
  status: z.number().int().nullable().describe("The receiver's HTTP status; null when none came (see `error`)."),
  error: z.string().nullable(),
  outcome: z
    .enum(["delivered", "retry", "failed", "dropped"])
    .describe("delivered (2xx); retry (sent again later); failed (given up after FS_WEBHOOK_RETRY_HOURS); dropped (the org's outbox was full)."),
  duration_ms: z.number().int(),
});

export const webhookDeliveriesResponse = z.object({ items: z.array(webhookAttemptResponse) });
