import { newId, newWebhookSecret } from "../../../shared/ids.js";
import type { WebhookEndpointRecord } from "../../../store/records.js";
import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { createWebhookBody, webhookWithSecretResponse } from "../../schemas/webhooks.js";
import {
  accessDocs,
  checkWebhookUrl,
  publicWebhook,
  WEBHOOK_EXAMPLE,
  WEBHOOK_SECRET_EXAMPLE,
  webhookOrg,
  webhookPath,
  type WebhookAccess,
} from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "config" | "store">;

/** POST /v1/orgs/{orgId}/webhooks (and /v1/admin/...): registers an endpoint; its secret is in this answer only. */
export function webhooksPost(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "post",
    ...webhookPath(access, "", true),
    body: createWebhookBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Register a webhook endpoint",
      description: `The org's events chosen in \`events\` are POSTed to \`url\`, signed the Standard Webhooks way with the endpoint's secret (\`secret\`, shown in this answer only: a replay of this call with the same \`Idempotency-Key\` answers the same endpoint with \`secret: null\` and \`secret_already_shown: true\`, as the secret is stored only in the endpoint, to sign; roll it if it was lost). At most FS_WEBHOOK_ENDPOINTS_MAX endpoints per org (10 by default): past it 409 LIMIT_EXCEEDED, and nothing is created. An http:// URL is refused (400) unless the operator allows it (FS_WEBHOOK_ALLOW_HTTP), and so is a URL whose host is a non-public IP address (loopback, private, link-local, unique-local, shared, multicast, reserved; in any spelling, e.g. http://2130706433/ or [::ffff:127.0.0.1]) or a localhost name, unless the operator allows private addresses (FS_WEBHOOK_ALLOW_PRIVATE); a host name is judged by its DNS answers at each delivery. See docs/integrations.md, "Webhooks".`,
      tag: "webhooks",
      status: 201,
      response: webhookWithSecretResponse,
      ...accessDocs(access),
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "LIMIT_EXCEEDED", "NOT_READY"],
      example: {
        params: { orgId: WEBHOOK_EXAMPLE.org_id },
        body: { url: WEBHOOK_EXAMPLE.url, events: WEBHOOK_EXAMPLE.events },
        response: { ...WEBHOOK_EXAMPLE, secret: WEBHOOK_SECRET_EXAMPLE, secret_already_shown: false },
      },
    },
    async handle({ principal, params, body, nowMs }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      checkWebhookUrl(body.url, deps.config);
      const endpoint: WebhookEndpointRecord = {
        id: newId("we"),
        org_id: orgId,
        url: body.url,
        events: body.events,
        enabled: body.enabled ?? true,
        secret: newWebhookSecret(),
        previous_secrets: [],
        created_at: new Date(nowMs).toISOString(),
        pending: 0,
      };
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.create", endpoint }));
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
