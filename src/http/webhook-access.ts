import type { Config } from "../config/index.js";
import type { AuthRequirement, KeyPrincipal } from "../front/auth.js";
import { ApiError } from "../shared/errors.js";
import { hostOf } from "../shared/public-address.js";
import type { WebhookEndpointRecord } from "../store/records.js";
import { ownOrgId } from "./routes/project-access.js";

/**
 * Who calls a webhook route: the org itself with its secret key (/v1/orgs/{orgId}/webhooks...),
 * or the operator with the admin token (/v1/admin/orgs/{orgId}/webhooks...). Each route file
 * builds both from one definition.
 */
export type WebhookAccess = "org" | "admin";

/**
 * The route's pattern (`suffix` after `/webhooks`) and authentication for `access`. `write`: the
 * route changes where live events go (create, update, delete, roll), so a test key is refused.
 */
export function webhookPath(access: WebhookAccess, suffix = "", write = false): { pattern: string; auth: AuthRequirement } {
  return access === "admin"
    ? { pattern: `/v1/admin/orgs/:orgId/webhooks${suffix}`, auth: { kind: "admin" } }
    : { pattern: `/v1/orgs/:orgId/webhooks${suffix}`, auth: write ? { kind: "secret", live: true } : { kind: "secret" } };
}

/** The org a call is about: any with the admin token, the key's own with a secret key (NOT_FOUND otherwise). */
export function webhookOrg(access: WebhookAccess, principal: KeyPrincipal | null, orgId: string): string {
  return access === "admin" ? orgId : ownOrgId(principal!, orgId);
}

/**
 * Refuses (VALIDATION_ERROR) an http:// URL unless the operator allows it, and a URL whose host
 * is a non-public IP literal (in any spelling the URL parser reads as one) or a `localhost` name
 * unless the operator allows private addresses. A host name is judged again by its DNS answers at
 * each delivery (store/writer/webhook-deliverer.ts).
 */
export function checkWebhookUrl(url: string, config: Pick<Config, "FS_WEBHOOK_ALLOW_HTTP" | "FS_WEBHOOK_ALLOW_PRIVATE">, field = "body.url"): void {
  if (!config.FS_WEBHOOK_ALLOW_HTTP && !url.toLowerCase().startsWith("https://")) {
    throw new ApiError("VALIDATION_ERROR", `${field}: must be an https URL (this service does not send webhooks over http).`, { param: field });
  }
  if (config.FS_WEBHOOK_ALLOW_PRIVATE) return;
  const host = hostOf(url);
  if ("refused" in host) {
    throw new ApiError(
      "VALIDATION_ERROR",
      `${field}: ${host.refused} is not a public address (loopback, private, link-local, unique-local, shared, multicast or reserved); webhooks go to public addresses only (FS_WEBHOOK_ALLOW_PRIVATE).`,
      { param: field },
    );
  }
}

/** An endpoint as the API shows it: never its secrets. */
export function publicWebhook(e: WebhookEndpointRecord, nowMs: number) {
  const graces = e.previous_secrets.filter((p) => p.expires_at > nowMs).map((p) => p.expires_at);
  return {
    id: e.id,
    org_id: e.org_id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    created_at: e.created_at,
    pending: e.pending,
    previous_secret_expires_at: graces.length === 0 ? null : new Date(Math.max(...graces)).toISOString(),
  };
}

/** The endpoint the OpenAPI document's examples show. */
export const WEBHOOK_EXAMPLE = {
  id: "we_4fH8kQ2mZx7LpV3a",
  org_id: "org_3kT9xQ2mLbVfZ8aW",
  url: "https://example.com/hooks/fraudscore",
  events: ["key.created", "quota.80_percent"],
  enabled: true,
  created_at: "2026-11-20T22:15:00.000Z",
  pending: 0,
  previous_secret_expires_at: null,
} satisfies ReturnType<typeof publicWebhook>;

/** The examples' secret (not a real one). */
export const WEBHOOK_SECRET_EXAMPLE = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** The part of a route's docs and answer that differs by access: credits are stated on key routes. */
export function accessDocs(access: WebhookAccess): { credits?: readonly number[] } {
  return access === "org" ? { credits: [0] } : {};
}
