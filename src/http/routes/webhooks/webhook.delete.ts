import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { deletedWebhookResponse, webhookIdParam } from "../../schemas/webhooks.js";
import { accessDocs, WEBHOOK_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "store">;

/** DELETE /v1/orgs/{orgId}/webhooks/{webhookId} (and /v1/admin/...): with what waited for it and its log. */
export function webhookDelete(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "del",
    ...webhookPath(access, "/:webhookId", true),
    params: { orgId: orgIdParam, webhookId: webhookIdParam },
    docs: {
      summary: "Delete a webhook endpoint",
      description: "The endpoint, the events waiting for it and its delivery log are deleted; a delivery in flight may still arrive.",
      tag: "webhooks",
      response: deletedWebhookResponse,
      ...accessDocs(access),
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { orgId: WEBHOOK_EXAMPLE.org_id, webhookId: WEBHOOK_EXAMPLE.id }, response: { id: WEBHOOK_EXAMPLE.id, deleted: true } },
    },
    async handle({ principal, params }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.delete", orgId, id: params.webhookId }));
      return { data: { id: ack.endpoint.id, deleted: true as const }, credits: access === "org" ? 0 : undefined };
    },
  });
}
