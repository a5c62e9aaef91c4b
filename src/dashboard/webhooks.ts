import { WEBHOOK_EVENTS } from "../store/records.js";
import { invokeAsKey, liveChange, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, when } from "./layout.js";

/** An endpoint as GET /v1/orgs/{orgId}/webhooks lists it (never its secret). */
interface ListedWebhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  pending: number;
  previous_secret_expires_at: string | null;
}

/** One attempt of an endpoint's delivery log. */
interface ListedAttempt {
  webhook_id: string;
  type: string;
  at: string;
  status: number | null;
  error: string | null;
  outcome: string;
  duration_ms: number;
}

/**
 * GET /dashboard/webhooks[?endpoint=ID]: the org's webhook endpoints (add, delete, roll the
 * secret) and the delivery log of one of them (the first by default) with the receiver's answers.
 */
export async function webhooksPage(ctx: DashContext): Promise<string> {
  const org = [ctx.viewer.orgId];
  const endpoints = (await invokeAsKey(ctx, ctx.routes.webhooks, { params: org })).items as ListedWebhook[];
  const chosen = endpoints.find((e) => e.id === ctx.query.get("endpoint")) ?? endpoints[0];
  const form = (action: string, id: string, label: string, cls = ""): string =>
    `<form method="post" action="/dashboard/webhooks/${action}" class="inline">${csrfField(ctx.viewer)}<input type="hidden" name="endpoint" value="${esc(id)}"><button type="submit"${cls} aria-label="${label} ${esc(id)}">${label}</button></form>`;
  const rows = endpoints
    .map(
      (e) =>
        `<tr><td class="mono"><a href="/dashboard/webhooks?endpoint=${encodeURIComponent(e.id)}">${esc(e.id)}</a></td><td class="mono">${esc(e.url)}</td><td>${e.events.map(esc).join(", ")}</td><td>${e.enabled ? "enabled" : "disabled"}</td><td>${e.pending}</td><td>${e.previous_secret_expires_at ? `old secret signs until ${esc(when(e.previous_secret_expires_at))}` : "—"}</td><td>${form("roll", e.id, "Roll secret")} ${form("delete", e.id, "Delete", ' class="danger"')}</td></tr>`,
    )
    .join("");
  const log = chosen ? await deliveryLog(ctx, chosen) : "";
  const boxes = WEBHOOK_EVENTS.map(
    (ev) => `<div><span><input type="checkbox" id="ev-${ev}" name="events" value="${ev}"> <label for="ev-${ev}">${ev}</label></span></div>`,
  ).join("");
  const body = `<table><caption class="muted">The org's webhook endpoints (docs/integrations.md, "Webhooks"); a secret is shown only once, when it is made or rolled.</caption><thead><tr><th scope="col">Endpoint</th><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Waiting</th><th scope="col">Rolled secret</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
${log}
<section aria-labelledby="new-webhook-h"><h2 id="new-webhook-h">New endpoint</h2>
<form method="post" action="/dashboard/webhooks">${csrfField(ctx.viewer)}<div class="row"><div><label for="webhook-url">URL (https)</label><input id="webhook-url" name="url" maxlength="2048" placeholder="https://example.com/hooks/fraudscore" required></div></div>
<fieldset><legend>Events</legend><div class="row">${boxes}</div></fieldset>
<button type="submit">Add the endpoint</button></form></section>`;
  return page("Webhooks", body, ctx.viewer, "/dashboard/webhooks");
}

/** The delivery log of `endpoint`, newest first, with the receiver's status codes. */
async function deliveryLog(ctx: DashContext, endpoint: ListedWebhook): Promise<string> {
  const attempts = (await invokeAsKey(ctx, ctx.routes.webhookDeliveries, { params: [ctx.viewer.orgId, endpoint.id] })).items as ListedAttempt[];
  const rows = attempts
    .map(
      (a) =>
        `<tr><td>${esc(when(a.at))}</td><td class="mono">${esc(a.webhook_id)}</td><td>${esc(a.type)}</td><td>${a.status === null ? "—" : a.status}</td><td>${a.error ? esc(a.error) : "—"}</td><td>${esc(a.outcome)}</td><td>${a.duration_ms} ms</td></tr>`,
    )
    .join("");
  return `<section aria-labelledby="log-h"><h2 id="log-h">Deliveries to ${esc(endpoint.url)}</h2>${
    attempts.length === 0
      ? "<p>No delivery yet.</p>"
      : `<table><thead><tr><th scope="col">At</th><th scope="col">webhook-id</th><th scope="col">Event</th><th scope="col">Answer</th><th scope="col">Error</th><th scope="col">Outcome</th><th scope="col">Took</th></tr></thead><tbody>${rows}</tbody></table>`
  }</section>`;
}

/** POST /dashboard/webhooks {url, events}: POST /v1/orgs/{own org}/webhooks; the secret is shown once. */
export async function webhookCreateAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's webhook endpoints");
  const e = await invokeAsKey(ctx, ctx.routes.webhookCreate, {
    params: [ctx.viewer.orgId],
    body: { url: ctx.query.get("url") ?? "", events: ctx.query.getAll("events") },
  });
  return {
    redirect: "/dashboard/webhooks",
    flash: { kind: "ok", text: `Endpoint ${e.id} added. Copy its signing secret now: it is not shown again.`, secret: e.secret },
  };
}

/** POST /dashboard/webhooks/delete {endpoint}: DELETE /v1/orgs/{own org}/webhooks/{id}. */
export async function webhookDeleteAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's webhook endpoints");
  const id = ctx.query.get("endpoint") ?? "";
  await invokeAsKey(ctx, ctx.routes.webhookDelete, { params: [ctx.viewer.orgId, id] });
  return { redirect: "/dashboard/webhooks", flash: { kind: "ok", text: `Endpoint ${id} is deleted, with the events that waited for it.` } };
}

/** POST /dashboard/webhooks/roll {endpoint}: a new secret; the old one signs beside it for a day. */
export async function webhookRollAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's webhook endpoints");
  const id = ctx.query.get("endpoint") ?? "";
  const e = await invokeAsKey(ctx, ctx.routes.webhookRoll, { params: [ctx.viewer.orgId, id], body: {} });
  return {
    redirect: `/dashboard/webhooks?endpoint=${encodeURIComponent(id)}`,
    flash: {
      kind: "ok",
      text: `Endpoint ${id} has a new secret; the old one keeps signing beside it until ${when(e.previous_secret_expires_at)}. Copy it now: it is not shown again.`,
      secret: e.secret,
    },
  };
}
