import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { orgIdParam } from "../../schemas/params.js";
import { webhookDeliveriesResponse, webhookIdParam } from "../../schemas/webhooks.js";
import { accessDocs, WEBHOOK_EXAMPLE, webhookOrg, webhookPath, type WebhookAccess } from "../../webhook-access.js";
import { ackOrThrow } from "../ack.js";

type Deps = Pick<AppDeps, "store">;

/** GET /v1/orgs/{orgId}/webhooks/{webhookId}/deliveries (and /v1/admin/...): the delivery log, newest first. */
export function webhookDeliveriesGet(deps: Deps, access: WebhookAccess) {
  return defineRoute({
    method: "get",
    ...webhookPath(access, "/:webhookId/deliveries"),
    params: { orgId: orgIdParam, webhookId: webhookIdParam },
    docs: {
      summary: "An endpoint's delivery log",
      description:
        "The endpoint's last FS_WEBHOOK_LOG_MAX attempts (100 by default), newest first: each with the message's `webhook-id`, the receiver's status code or the error, and what came of it.",
      tag: "webhooks",
      response: webhookDeliveriesResponse,
      ...accessDocs(access),
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: WEBHOOK_EXAMPLE.org_id, webhookId: WEBHOOK_EXAMPLE.id },
        response: {
          items: [
            {
              webhook_id: "msg_2Lk9xQ3mTz8VbN4pWc7Ha1Ds",
              type: "key.created",
              at: "2026-11-20T22:15:05.120Z",
              status: 200,
              error: null,
              outcome: "delivered",
              duration_ms: 84,
            },
            {
              webhook_id: "msg_2Lk9xQ3mTz8VbN4pWc7Ha1Ds",
              type: "key.created",
              at: "2026-11-20T22:15:00.050Z",
              status: 500,
              error: null,
              outcome: "retry",
              duration_ms: 61,
            },
          ],
        },
      },
    },
    async handle({ principal, params }) {
      const orgId = webhookOrg(access, principal, params.orgId);
      const ack = ackOrThrow(await deps.store.send({ op: "webhook.deliveries", orgId, id: params.webhookId }));
      const items = ack.attempts.map((a) => ({
        webhook_id: a.msg_id,
        type: a.type,
        at: new Date(a.at).toISOString(),
        status: a.status,
        error: a.error,
        outcome: a.outcome,
        duration_ms: a.duration_ms,
      }));
      return { data: { items }, credits: access === "org" ? 0 : undefined };
    },
  });
}
