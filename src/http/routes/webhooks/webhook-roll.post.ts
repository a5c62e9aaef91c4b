import { newWebhookSecret } from "../../../shared/ids.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { rollWebhookBody, WEBHOOK_ROLL_GRACE_DEFAULT_SECONDS, webhookIdParam, webhookWithSecretResponse } from "../../schemas/webhooks.js";
import { accessDocs, publicWebhook, WEBHOOK_EXAMPLE, WEBHOOK_SECRET_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "store">;

/** POST /v1/orgs/{orgId}/webhooks/{webhookId}/roll-secret (and /v1/admin/...): a new secret, the old one signing beside it for a while. */
export function webhookRollPost(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "post",
    ...webhookPath(access, "/:webhookId/roll-secret", true),
    body: rollWebhookBody,
    params: { orgId: orgIdParam, webhookId: webhookIdParam },
    docs: {
      summary: "Roll a webhook endpoint's secret",
      description:
        "Makes a new secret (in this answer only: a replay of this call with the same `Idempotency-Key` answers `secret: null` and `secret_already_shown: true`; roll again if it was lost). Until `previous_secret_expires_at` every delivery carries two signatures in `webhook-signature`, one per secret (Standard Webhooks allows several), so a receiver can switch to the new secret at any time in between.",
      tag: "webhooks",
      status: 201,
      response: webhookWithSecretResponse,
      ...accessDocs(access),
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: WEBHOOK_EXAMPLE.org_id, webhookId: WEBHOOK_EXAMPLE.id },
        body: { grace_seconds: 3600 },
        response: { ...WEBHOOK_EXAMPLE, previous_secret_expires_at: "2026-11-20T23:15:00.000Z", secret: WEBHOOK_SECRET_EXAMPLE, secret_already_shown: false },
      },
    },
    async handle({ principal, params, body, nowMs }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      const oldExpiresAt = nowMs + (body.grace_seconds ?? WEBHOOK_ROLL_GRACE_DEFAULT_SECONDS) * 1000;
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.roll", orgId, id: params.webhookId, secret: newWebhookSecret(), oldExpiresAt, nowMs }));
      const shown = publicWebhook(ack.endpoint, nowMs);
      // The answer kept for a replay (Idempotency-Key) never holds the secret: it is shown once.
      return {
        status: 201,
        data: { ...shown, secret: ack.endpoint.secret, secret_already_shown: false },
        replay: { ...shown, secret: null, secret_already_shown: true },
        credits: access === "org" ? 0 : undefined,
      };
    },
  });
}
