import { DEFAULT_BOT_POLICY, POLICY_KINDS, type BotPolicy } from "../scoring/bot-policy.js";
import { chooseProject, invokeAsKey, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, select, when } from "./layout.js";

/**
 * GET /dashboard/policy?project=: the project's bot policy as a form. Each setting is "default"
 * (left out of the stored document, so it follows the service's default) or an explicit value;
 * saving PUTs the document through the API's own route.
 */
export async function policyPage(ctx: DashContext): Promise<string> {
  const projects = await orgProjects(ctx);
  const project = chooseProject(projects, ctx.query.get("project"));
  if (!project) return page("Bot policy", "<p>This org has no project yet: create one under Projects.</p>", ctx.viewer, "/dashboard/policy");
  const view = await invokeAsKey(ctx, ctx.routes.policyGet, { params: [project.id] });
  const stored: Partial<BotPolicy> = view.stored ?? {};
  const picker = `<form method="get" action="/dashboard/policy" class="row"><div>${select("project", "Project", projects.map((p) => [p.id, `${p.name} (${p.id})`]), project.id, "pick-project")}</div><div><button type="submit" class="secondary">Show</button></div></form>`;
  const kindRows = POLICY_KINDS.map((k) => {
    const def = DEFAULT_BOT_POLICY.kinds[k] ?? "score";
    const cur = stored.kinds?.[k] ?? "";
    return `<tr><th scope="row"><label for="kind-${k}">${esc(k)}</label></th><td><select id="kind-${k}" name="kind.${k}">${[["", `default (${def})`], ["allow", "allow"], ["block", "block"], ["score", "score"]].map(([v, l]) => `<option value="${v}"${v === cur ? " selected" : ""}>${l}</option>`).join("")}</select></td><td>${esc(view.policy.kinds[k] ?? "score")}</td></tr>`;
  }).join("");
  const bots = Object.entries(stored.bots ?? {});
  const botRows = bots
    .map(([id, action], i) => `<tr><th scope="row"><label for="bot-${i}">${esc(id)}</label><input type="hidden" name="bot_id" value="${esc(id)}"></th><td><select id="bot-${i}" name="bot_action">${["allow", "block", "remove"].map((v) => `<option value="${v}"${v === action ? " selected" : ""}>${v === "remove" ? "remove this rule" : v}</option>`).join("")}</select></td></tr>`)
    .join("");
  const updated = view.updated_at ? `Last changed ${esc(when(view.updated_at))}.` : "This project uses the default policy.";
  const body = `${picker}<p>${updated} Rules apply in this order, the first that applies wins: spoofed bots, then rules for one bot, then rules for a kind. A change applies to the next hit.</p>
<form method="post" action="/dashboard/policy">${csrfField(ctx.viewer)}<input type="hidden" name="project" value="${esc(project.id)}">
<fieldset><legend>Bots by id</legend>${bots.length ? `<table><thead><tr><th scope="col">Bot id</th><th scope="col">Action</th></tr></thead><tbody>${botRows}</tbody></table>` : "<p>No rule for a single bot.</p>"}
<div class="row"><div><label for="new-bot">Add a rule for bot id</label><input id="new-bot" name="new_bot_id" list="known-bots" placeholder="gptbot" pattern="[a-z0-9][a-z0-9._\\-]{0,63}" size="20">${knownBots(ctx)}</div>
<div><label for="new-bot-action">Action</label><select id="new-bot-action" name="new_bot_action"><option value="block">block</option><option value="allow">allow</option></select></div></div></fieldset>
<fieldset><legend>Bots by kind</legend><table><thead><tr><th scope="col">Kind</th><th scope="col">Setting</th><th scope="col">In effect</th></tr></thead><tbody>${kindRows}</tbody></table>
<p class="muted">allow lets verified bots of the kind through (and unverifiable ones when allowed below); block blocks every hit of the kind; score leaves the decision to the score.</p></fieldset>
<fieldset><legend>Spoofed and unverified bots</legend><div class="row">
<div>${select("spoofed", "Bots whose claim failed verification", [["", `default (${DEFAULT_BOT_POLICY.spoofed})`], ["block", "block"], ["score", "score"]], stored.spoofed ?? "")}</div>
<div>${select("allow_unverified", "Let kind allow rules apply to bots that cannot be verified", [["", `default (${DEFAULT_BOT_POLICY.allow_unverified ? "yes" : "no"})`], ["true", "yes"], ["false", "no"]], stored.allow_unverified === undefined ? "" : String(stored.allow_unverified))}</div>
</div></fieldset>
<button type="submit">Save the policy</button></form>`;
  return page(`Bot policy of ${project.name}`, body, ctx.viewer, "/dashboard/policy");
}

/**
 * The bots the dataset in service knows, as suggestions for the bot id field (a datalist: the
 * browser filters it as one types): id, with name and kind as the label.
 */
function knownBots(ctx: DashContext): string {
  const known = ctx.deps.ipDatasets.get().bots.known;
  const options = known.map((b) => `<option value="${esc(b.bot_id)}">${esc(b.name)} (${esc(b.kind)})</option>`).join("");
  return `<datalist id="known-bots">${options}</datalist><div class="muted">${known.length.toLocaleString("en-US")} known bots: type to pick one.</div>`;
}

/** The stored document the form describes (settings left at "default" are left out). */
export function policyFromForm(form: URLSearchParams): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  const kinds: Record<string, string> = {};
  for (const k of POLICY_KINDS) {
    const v = form.get(`kind.${k}`);
    if (v) kinds[k] = v;
  }
  if (Object.keys(kinds).length) doc.kinds = kinds;
  const bots: Record<string, string> = {};
  const ids = form.getAll("bot_id");
  const actions = form.getAll("bot_action");
  ids.forEach((id, i) => {
    const a = actions[i];
    if (a && a !== "remove") bots[id] = a;
  });
  const added = (form.get("new_bot_id") ?? "").trim().toLowerCase();
  if (added) bots[added] = form.get("new_bot_action") ?? "block";
  if (Object.keys(bots).length) doc.bots = bots;
  const spoofed = form.get("spoofed");
  if (spoofed) doc.spoofed = spoofed;
  const unverified = form.get("allow_unverified");
  if (unverified === "true" || unverified === "false") doc.allow_unverified = unverified === "true";
  else if (unverified) doc.allow_unverified = unverified; // refused by the schema, with its message
  return doc;
}

/** POST /dashboard/policy: PUT /v1/projects/{id}/bot-policy with the form's document. */
export async function policyAction(ctx: DashContext): Promise<ActionResult> {
  const projectId = ctx.query.get("project") ?? "";
  const back = `/dashboard/policy?project=${encodeURIComponent(projectId)}`;
  await invokeAsKey(ctx, ctx.routes.policyPut, { params: [projectId], body: policyFromForm(ctx.query) });
  return { redirect: back, flash: { kind: "ok", text: "The bot policy is saved; the next hit follows it." } };
}
