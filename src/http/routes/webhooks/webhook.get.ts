import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { webhookIdParam, webhookResponse } from "../../schemas/webhooks.js";
import { accessDocs, publicWebhook, WEBHOOK_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "store">;

/** GET /v1/orgs/{orgId}/webhooks/{webhookId} (and /v1/admin/...). */
export function webhookGet(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "get",
    ...webhookPath(access, "/:webhookId"),
    params: { orgId: orgIdParam, webhookId: webhookIdParam },
    docs: {
      summary: "Get a webhook endpoint",
      description: "One endpoint of the org, without its secret. Another org's endpoint answers 404 NOT_FOUND, as a missing one does.",
      tag: "webhooks",
      response: webhookResponse,
      ...accessDocs(access),
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { orgId: WEBHOOK_EXAMPLE.org_id, webhookId: WEBHOOK_EXAMPLE.id }, response: WEBHOOK_EXAMPLE },
    },
    async handle({ principal, params, nowMs }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.get", orgId, id: params.webhookId }));
      return { data: publicWebhook(ack.endpoint, nowMs), credits: access === "org" ? 0 : undefined };
    },
  });
}
