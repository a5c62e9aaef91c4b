import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** Events fraudscore sends to an org's webhook endpoints (docs/integrations.md, "Webhooks"). */
export type WebhookEventType =
  | "quota.80_percent"
  | "quota.100_percent"
  | "plan.changed"
  | "subscription.changed"
  | "key.created"
  | "key.disabled"
  | "session.blocked"
  | "account.blocked"
  | "observations.dropped";

/** A verified delivery's body: `{ type, timestamp, data }` (Standard Webhooks' payload shape). */
export interface WebhookEvent {
  type: WebhookEventType;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  /** What the event is about; `livemode` is false when a test-mode key (fs_test_…, fs_pub_test_…) caused it. */
  data: Record<string, unknown> & { livemode: boolean };
}

/**
 * Verifies a delivery with the endpoint's secret (`whsec_…`) and returns its event: the
 * `webhook-signature` must match the exact body, and `webhook-timestamp` be within 5 minutes of
 * now (replays are refused). Throws WebhookVerificationError otherwise. Pass the raw body, not a
 * re-serialised one. With `webhook-id` a receiver drops a delivery it processed already: each
 * event is sent at least once.
 *
 * @example
 * const event = verifyWebhook(process.env.FS_WEBHOOK_SECRET!, rawBody, req.headers);
 * if (event.type === "quota.80_percent") notifyBilling(event.data);
 */
export function verifyWebhook(secret: string, body: string, headers: Record<string, string | string[] | undefined> | Headers): WebhookEvent {
  const one = (name: string): string => {
    if (headers instanceof Headers) return headers.get(name) ?? "";
    const v = headers[name];
    return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
  };
  return new Webhook(secret).verify(body, {
    "webhook-id": one("webhook-id"),
    "webhook-timestamp": one("webhook-timestamp"),
    "webhook-signature": one("webhook-signature"),
  }) as WebhookEvent;
}

export { Webhook, WebhookVerificationError };
