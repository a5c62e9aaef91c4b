import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { webhookListResponse } from "../../schemas/webhooks.js";
import { accessDocs, publicWebhook, WEBHOOK_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "store">;

/** GET /v1/orgs/{orgId}/webhooks (and /v1/admin/...): the org's endpoints, without their secrets. */
export function webhooksGet(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "get",
    ...webhookPath(access),
    params: { orgId: orgIdParam },
    docs: {
      summary: "List the org's webhook endpoints",
      description: "Every endpoint of the org (at most FS_WEBHOOK_ENDPOINTS_MAX), with how many events wait for each. Secrets are never listed.",
      tag: "webhooks",
      response: webhookListResponse,
      ...accessDocs(access),
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { orgId: WEBHOOK_EXAMPLE.org_id }, response: { items: [WEBHOOK_EXAMPLE] } },
    },
    async handle({ principal, params, nowMs }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.list", orgId }));
      return { data: { items: ack.endpoints.map((e) => publicWebhook(e, nowMs)) }, credits: access === "org" ? 0 : undefined };
    },
  });
}
