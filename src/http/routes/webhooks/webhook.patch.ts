import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { patchWebhookBody, webhookIdParam, webhookResponse } from "../../schemas/webhooks.js";
import { accessDocs, checkWebhookUrl, publicWebhook, WEBHOOK_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "config" | "store">;

/** PATCH /v1/orgs/{orgId}/webhooks/{webhookId} (and /v1/admin/...): url, events, enabled. */
export function webhookPatch(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "patch",
    ...webhookPath(access, "/:webhookId", true),
    body: patchWebhookBody,
    params: { orgId: orgIdParam, webhookId: webhookIdParam },
    docs: {
      summary: "Change a webhook endpoint",
      description:
        "Changes the URL (checked as at registration: https, a public address), the events or whether the endpoint is enabled. A disabled endpoint gets no new events; what waits for it stays and goes out, in order, once it is enabled again.",
      tag: "webhooks",
      response: webhookResponse,
      ...accessDocs(access),
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: WEBHOOK_EXAMPLE.org_id, webhookId: WEBHOOK_EXAMPLE.id },
        body: { enabled: false },
        response: { ...WEBHOOK_EXAMPLE, enabled: false },
      },
    },
    async handle({ principal, params, body, nowMs }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      if (body.url !== undefined) checkWebhookUrl(body.url, deps.config);
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.update", orgId, id: params.webhookId, patch: body, nowMs }));
      return { data: publicWebhook(ack.endpoint, nowMs), credits: access === "org" ? 0 : undefined };
    },
  });
}
