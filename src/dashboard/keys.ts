import { SCOPES } from "../shared/api-keys.js";
import { withStore } from "../store/store-wait.js";
import { ApiError } from "../shared/errors.js";
import { mayCreateKey, mayManageKey, modeOf, refuse } from "../front/capabilities.js";
import { invokeOwn, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, when } from "./layout.js";

/** A key as the admin listing shows it (never its secret). */
interface ListedKey {
  id: string;
  type: string;
  mode?: string;
  name: string | null;
  project_id: string | null;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  disabled: boolean;
}

/** What a key's confirmation page can do to it. */
type KeyChange = "disable" | "delete" | "roll";
const CHANGES: readonly KeyChange[] = ["disable", "delete", "roll"];

/** Grace periods the dashboard offers for a roll, in seconds. */
const GRACE_CHOICES: ReadonlyArray<[number, string]> = [
  [0, "none: the old key stops now"],
  [3_600, "1 hour"],
  [86_400, "1 day"],
  [7 * 86_400, "7 days"],
  [30 * 86_400, "30 days"],
];

/** GET /dashboard/keys: the org's keys (never their secrets); create one; disable, enable, roll or delete one. */
export async function keysPage(ctx: DashContext): Promise<string> {
  const [keys, projects] = await Promise.all([invokeOwn(ctx, ctx.routes.keys, { params: [ctx.viewer.orgId], query: "limit=100" }), orgProjects(ctx)]);
  const mine = ctx.principal.key.scopes;
  const testCaller = modeOf(ctx.principal.key) === "test";
  const rows = (keys.items as ListedKey[])
    .map((k) => {
      const self = k.id === ctx.viewer.keyId;
      // Only the buttons this session may use (front/capabilities.ts); the actions refuse the others all the same.
      const refused = mayManageKey(ctx.principal.key, { ...k, org_id: ctx.viewer.orgId });
      const ask = (change: KeyChange, label: string, cls = ""): string =>
        `<a class="button${cls}" href="/dashboard/keys/confirm?do=${change}&amp;key=${encodeURIComponent(k.id)}" aria-label="${label} ${esc(k.id)}">${label}</a>`;
      const enable = `<form method="post" action="/dashboard/keys/enable" class="inline">${csrfField(ctx.viewer)}<input type="hidden" name="key" value="${esc(k.id)}"><button type="submit" aria-label="Enable ${esc(k.id)}">Enable</button></form>`;
      const actions = refused
        ? `<details class="muted" data-refused="${esc(k.id)}"><summary>Not with your key</summary>${esc(refused)}</details>`
        : (k.disabled ? [enable] : [ask("roll", "Roll"), ask("disable", "Disable", " danger")]).concat(ask("delete", "Delete", " danger")).join(" ");
      return `<tr><td class="mono">${esc(k.id)}${self ? " <strong>(this session)</strong>" : ""}</td><td>${k.name ? esc(k.name) : "—"}</td><td>${esc(k.type)}</td><td>${k.mode === "test" ? "<strong>test</strong>" : "live"}</td><td class="mono">${k.project_id ? esc(k.project_id) : "—"}</td><td>${k.scopes.map(esc).join(", ") || "—"}</td>
<td>${esc(when(k.created_at))}</td><td>${k.last_used_at ? esc(when(k.last_used_at)) : "never"}</td><td>${k.expires_at ? esc(when(k.expires_at)) : "never"}</td><td>${k.disabled ? "disabled" : "enabled"}</td><td>${actions}</td></tr>`;
    })
    .join("");
  const scopeBoxes = SCOPES.map((s) => {
    const allowed = mine.includes(s);
    return `<div><span><input type="checkbox" id="scope-${s}" name="scopes" value="${s}"${allowed ? "" : " disabled"}> <label for="scope-${s}">${s}</label></span></div>`;
  }).join("");
  const body = `<table><caption class="muted">Every key of the org; a secret is shown only once, when it is created or rolled. "Last used" is up to a minute behind. A key is managed only from a session whose key holds every one of its scopes, and a live key only from a live key's session.</caption><thead><tr><th scope="col">Key id</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Mode</th><th scope="col">Project</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
<section aria-labelledby="new-key-h"><h2 id="new-key-h">New key</h2>
<form method="post" action="/dashboard/keys">${csrfField(ctx.viewer)}<div class="row">
<div><label for="key-name">Name (optional)</label><input id="key-name" name="name" maxlength="80" placeholder="checkout backend"></div>
<div><label for="key-type">Type</label><select id="key-type" name="type"><option value="secret">secret (server-side)</option><option value="publishable">publishable (beacon, bound to a project)</option></select></div>
<div><label for="key-mode">Mode</label><select id="key-mode" name="mode">${testCaller ? "" : '<option value="live">live</option>'}<option value="test">test (charges nothing, real scoring, magic inputs)</option></select></div>
<div><label for="key-project">Project (publishable keys)</label><select id="key-project" name="project_id"><option value="">none</option>${projects.map((p) => `<option value="${esc(p.id)}">${esc(p.name)} (${esc(p.id)})</option>`).join("")}</select></div>
<div><label for="key-expires">Expires (optional, UTC)</label><input id="key-expires" name="expires_at" type="datetime-local"></div></div>
<fieldset><legend>Scopes (secret keys; at most those of the key you signed in with${testCaller ? ", a test key: it creates test keys only" : ""})</legend><div class="row">${scopeBoxes}</div></fieldset>
<button type="submit">Create the key</button></form></section>`;
  return page("Keys", body, ctx.viewer, "/dashboard/keys");
}

/**
 * The org's key `keyId` (a NOT_FOUND for another org's or a deleted one), when the session may
 * manage it: its key holds every scope of that key and, for a live key, is live (403
 * INSUFFICIENT_SCOPE otherwise; front/capabilities.ts).
 */
async function manageableKey(ctx: DashContext, keyId: string) {
  const key = await withStore(() => ctx.deps.auth.keyById(keyId));
  if (!key || key.org_id !== ctx.viewer.orgId || key.deleted_at !== undefined) throw new ApiError("NOT_FOUND", `No key with id ${keyId}.`);
  refuse(mayManageKey(ctx.principal.key, key));
  return key;
}

/**
 * GET /dashboard/keys/confirm?do=disable|delete|roll&key=ID: what the change does to that key
 * (and to this session when it is the key signed in with), and the button that makes it.
 */
export async function keyConfirmPage(ctx: DashContext): Promise<string> {
  const change = ctx.query.get("do") as KeyChange;
  if (!CHANGES.includes(change)) throw new ApiError("VALIDATION_ERROR", "query.do: must be one of disable, delete, roll.");
  const key = await manageableKey(ctx, ctx.query.get("key") ?? "");
  const self = key.id === ctx.viewer.keyId;
  const named = `${esc(key.id)}${key.name ? ` (${esc(key.name)})` : ""}`;
  const what: Record<KeyChange, string> = {
    disable: `Calls with key ${named} are refused (403 KEY_DISABLED) from the next request on, until it is enabled again.${self ? " <strong>You are signed in with this key: disabling it signs you out.</strong>" : ""}`,
    delete: `Key ${named} is deleted for good: calls with it are refused as an unknown key from the next request on, and it cannot be enabled again.${self ? " <strong>You are signed in with this key: deleting it signs you out.</strong>" : ""}`,
    roll: `A new secret replaces key ${named}, with the same type, scopes, mode and name. The old key keeps working for the grace period, then expires: deploy the new one before then.${self ? " You are signed in with this key: your session ends when the grace period does." : ""}`,
  };
  const grace =
    change === "roll"
      ? `<div><label for="grace">Grace period for the old key</label><select id="grace" name="grace_seconds">${GRACE_CHOICES.map(([s, label]) => `<option value="${s}"${s === 86_400 ? " selected" : ""}>${label}</option>`).join("")}</select></div>`
      : "";
  const verb = { disable: "Disable", delete: "Delete", roll: "Roll" }[change];
  const body = `<section aria-labelledby="confirm-h"><h2 id="confirm-h">${verb} key ${esc(key.id)}?</h2><p>${what[change]}</p>
<form method="post" action="/dashboard/keys/${change}">${csrfField(ctx.viewer)}<input type="hidden" name="key" value="${esc(key.id)}"><input type="hidden" name="confirm" value="yes">${grace}
<button type="submit"${change === "roll" ? "" : ' class="danger"'}>${verb} the key</button> <a href="/dashboard/keys">Cancel</a></form></section>`;
  return page(`${verb} a key`, body, ctx.viewer, "/dashboard/keys");
}

/** A change that needs its confirmation page first: without `confirm=yes`, the browser goes there. */
function unconfirmed(ctx: DashContext, change: KeyChange, keyId: string): ActionResult | null {
  return ctx.query.get("confirm") === "yes" ? null : { redirect: `/dashboard/keys/confirm?do=${change}&key=${encodeURIComponent(keyId)}` };
}

/**
 * POST /dashboard/keys: POST /v1/admin/orgs/{own org}/keys. A session grants no more than its key
 * holds, a test key as a live one: a new key's scopes must be among the signed-in key's, and a
 * test key's session creates test keys only (front/capabilities.ts).
 */
export async function keyCreateAction(ctx: DashContext): Promise<ActionResult> {
  const type = ctx.query.get("type") ?? "";
  const scopes = ctx.query.getAll("scopes");
  const projectId = ctx.query.get("project_id") || undefined;
  const expires = ctx.query.get("expires_at") || undefined;
  const mode = ctx.query.get("mode") || undefined;
  refuse(mayCreateKey(ctx.principal.key, { mode: mode === "test" ? "test" : "live", type: type === "publishable" ? "publishable" : "secret", scopes }));
  const name = ctx.query.get("name")?.trim() || undefined;
  const body: Record<string, unknown> = { type };
  if (name) body.name = name;
  if (mode) body.mode = mode;
  if (type === "publishable") body.project_id = projectId;
  else if (scopes.length) body.scopes = scopes;
  if (type !== "publishable" && projectId) body.project_id = projectId;
  // datetime-local sends "YYYY-MM-DDTHH:MM" without a zone; the form says UTC.
  if (expires) body.expires_at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(expires) ? `${expires}:00Z` : expires;
  const k = await invokeOwn(ctx, ctx.routes.keyCreate, { params: [ctx.viewer.orgId], body });
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${k.id} (${k.type}${k.mode === "test" ? ", test mode" : ""}) created. Copy it now: it is not shown again.`, secret: k.key } };
}

/** POST /dashboard/keys/disable {key, confirm}: POST /v1/admin/keys/{id}/disable, for a key of the session's org only. */
export async function keyDisableAction(ctx: DashContext): Promise<ActionResult> {
  const keyId = ctx.query.get("key") ?? "";
  await manageableKey(ctx, keyId);
  const ask = unconfirmed(ctx, "disable", keyId);
  if (ask) return ask;
  await invokeOwn(ctx, ctx.routes.keyDisable, { params: [keyId] });
  if (keyId === ctx.viewer.keyId) return { redirect: "/dashboard/login?m=key-disabled", endSession: true };
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${keyId} is disabled; it is refused from the next request on.` } };
}

/** POST /dashboard/keys/enable {key}: POST /v1/admin/keys/{id}/enable (nothing to confirm: it only gives back what was). */
export async function keyEnableAction(ctx: DashContext): Promise<ActionResult> {
  const keyId = ctx.query.get("key") ?? "";
  await manageableKey(ctx, keyId);
  await invokeOwn(ctx, ctx.routes.keyEnable, { params: [keyId] });
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${keyId} is enabled again.` } };
}

/** POST /dashboard/keys/delete {key, confirm}: DELETE /v1/admin/keys/{id}. */
export async function keyDeleteAction(ctx: DashContext): Promise<ActionResult> {
  const keyId = ctx.query.get("key") ?? "";
  await manageableKey(ctx, keyId);
  const ask = unconfirmed(ctx, "delete", keyId);
  if (ask) return ask;
  await invokeOwn(ctx, ctx.routes.keyDelete, { params: [keyId] });
  if (keyId === ctx.viewer.keyId) return { redirect: "/dashboard/login?m=key-disabled", endSession: true };
  return { redirect: "/dashboard/keys", flash: { kind: "ok", text: `Key ${keyId} is deleted.` } };
}

/** POST /dashboard/keys/roll {key, grace_seconds, confirm}: POST /v1/admin/keys/{id}/roll; the new secret is shown once. */
export async function keyRollAction(ctx: DashContext): Promise<ActionResult> {
  const keyId = ctx.query.get("key") ?? "";
  await manageableKey(ctx, keyId);
  const ask = unconfirmed(ctx, "roll", keyId);
  if (ask) return ask;
  const grace = Number(ctx.query.get("grace_seconds") ?? "86400");
  const k = await invokeOwn(ctx, ctx.routes.keyRoll, { params: [keyId], body: { grace_seconds: grace } });
  const until = k.previous.expires_at ? `until ${when(k.previous.expires_at)}` : "";
  return {
    redirect: "/dashboard/keys",
    flash: { kind: "ok", text: `Key ${k.id} replaces ${keyId}, which keeps working ${until || "no longer"}. Copy the new key now: it is not shown again.`, secret: k.key },
  };
}
