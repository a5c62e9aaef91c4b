import { SCOPES } from "../shared/api-keys.js";
import { withStore } from "../store/store-wait.js";
import { ApiError } from "../shared/errors.js";
import { invokeOwn, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, when } from "./layout.js";

/** GET /dashboard/keys: the org's keys (never their secrets); create one; disable one. */
export async function keysPage(ctx: DashContext): Promise<string> {
  const [keys, projects] = await Promise.all([invokeOwn(ctx, ctx.routes.keys, { params: [ctx.viewer.orgId], query: "limit=100" }), orgProjects(ctx)]);
  const rows = (keys.items as Array<{ id: string; type: string; mode?: string; project_id: string | null; scopes: string[]; created_at: string; expires_at: string | null; disabled: boolean }>)
    .map((k) => {
      const self = k.id === ctx.viewer.keyId;
      const action = k.disabled
        ? "—"
        : `<form method="post" action="/dashboard/keys/disable" class="inline">${csrfField(ctx.viewer)}<input type="hidden" name="key" value="${esc(k.id)}"><button type="submit" class="danger" aria-label="Disable ${esc(k.id)}${self ? " (signs you out)" : ""}">Disable</button></form>`;
      return `<tr><td class="mono">${esc(k.id)}${self ? " <strong>(this session)</strong>" : ""}</td><td>${esc(k.type)}</td><td>${k.mode === "test" ? "<strong>test</strong>" : "live"}</td><td class="mono">${k.project_id ? esc(k.project_id) : "—"}</td><td>${k.scopes.map(esc).join(", ") || "—"}</td>
<td>${esc(when(k.created_at))}</td><td>${k.expires_at ? esc(when(k.expires_at)) : "never"}</td><td>${k.disabled ? "disabled" : "enabled"}</td><td>${action}</td></tr>`;
    })
    .join("");
  const mine = ctx.principal.key.scopes;
  const scopeBoxes = SCOPES.map((s) => {
    const allowed = mine.includes(s);
    return `<div><span><input type="checkbox" id="scope-${s}" name="scopes" value="${s}"${allowed ? "" : " disabled"}> <label for="scope-${s}">${s}</label></span></div>`;
  }).join("");
  const body = `<table><caption class="muted">Every key of the org; a secret is shown only once, when it is created.</caption><thead><tr><th scope="col">Key id</th><th scope="col">Type</th><th scope="col">Mode</th><th scope="col">Project</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>
<section aria-labelledby="new-key-h"><h2 id="new-key-h">New key</h2>
<form method="post" action="/dashboard/keys">${csrfField(ctx.viewer)}<div class="row">
<div><label for="key-type">Type</label><select id="key-type" name="type"><option value="secret">secret (server-side)</option><option value="publishable">publishable (beacon, bound to a project)</option></select></div>
<div><label for="key-mode">Mode</label><select id="key-mode" name="mode"><option value="live">live</option><option value="test">test (charges nothing, real scoring, magic inputs)</option></select></div>
<div><label for="key-project">Project (publishable keys)</label><select id="key-project" name="project_id"><option value="">none</option>${projects.map((p) => `<option value="${esc(p.id)}">${esc(p.name)} (${esc(p.id)})</option>`).join("")}</select></div>
<div><label for="key-expires">Expires (optional, UTC)</label><input id="key-expires" name="expires_at" type="datetime-local"></div></div>
<fieldset><legend>Scopes (secret keys; at most those of the key you signed in with)</legend><div class="row">${scopeBoxes}</div></fieldset>
<button type="submit">Create the key</button></form></section>`;
  return page("Keys", body, ctx.viewer, "/dashboard/keys");
}

/**
 * POST /dashboard/keys: POST /v1/admin/orgs/{own org}/keys. A session grants no more than its key
 * holds: a new key's scopes must be among the signed-in key's.
 */
export async function keyCreateAction(ctx: DashContext): Promise<ActionResult> {
  const type = ctx.query.get("type") ?? "";
  const scopes = ctx.query.getAll("scopes");
  const missing = scopes.filter((s) => !(ctx.principal.key.scopes as string[]).includes(s));
  if (missing.length) throw new ApiError("INSUFFICIENT_SCOPE", `A new key can carry only scopes of the key you signed in with; this one lacks ${missing.join(", ")}.`);
  const projectId = ctx.query.get("project_id") || undefined;
  const expires = ctx.query.get("expires_at") || undefined;
  const mode = ctx.query.get("mode") || undefined;
  const body: Record<string, unknown> = { type };
  if (mode) body.mode = mode;
  if (type === "publishable") body.project_id = projectId;
  else if (scopes.length) body.scopes = scopes;
  if (type !== "publishable" && projectId) body.project_id = projectId;
  // datetime-local sends "YYYY-MM-DDTHH:MM" without a zone; the form says UTC.
  if (expires) body.expires_at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(expires) ? `${expires}:00Z` : expires;
  const k = await invokeOwn(ctx, ctx.routes.keyCreate, { params: [ctx.viewer.orgId], body });
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${k.id} (${k.type}${k.mode === "test" ? ", test mode" : ""}) created. Copy it now: it is not shown again.`, secret: k.key } };
}

/** POST /dashboard/keys/disable: POST /v1/admin/keys/{id}/disable, for a key of the session's org only. */
export async function keyDisableAction(ctx: DashContext): Promise<ActionResult> {
  const keyId = ctx.query.get("key") ?? "";
  const key = await withStore(() => ctx.deps.auth.keyById(keyId));
  if (!key || key.org_id !== ctx.viewer.orgId) throw new ApiError("NOT_FOUND", `No key with id ${keyId}.`);
  await invokeOwn(ctx, ctx.routes.keyDisable, { params: [keyId] });
  if (keyId === ctx.viewer.keyId) return { redirect: "/dashboard/login?m=key-disabled", endSession: true };
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${keyId} is disabled; it is refused from the next request on.` } };
}
