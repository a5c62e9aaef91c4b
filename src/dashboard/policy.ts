import { DEFAULT_BOT_POLICY, POLICY_KINDS, type BotPolicy } from "../scoring/bot-policy.js";
import { chooseProject, invokeAsKey, liveChange, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, select, when } from "./layout.js";
import { toApiError } from "../http/to-api-error.js";
import { DECISION_THRESHOLDS, type DecisionThresholds } from "../scoring/check.js";

/**
 * GET /dashboard/policy?project=: the project's bot policy as a form. Each setting is "default"
 * (left out of the stored document, so it follows the service's default) or an explicit value;
 * saving PUTs the document through the API's own route, previewing replays it first.
 */
export async function policyPage(ctx: DashContext): Promise<string> {
  const projects = await orgProjects(ctx);
  const project = chooseProject(projects, ctx.query.get("project"));
  if (!project) return page("Bot policy", "<p>This org has no project yet: create one under Projects.</p>", ctx.viewer, "/dashboard/policy");
  const view = await invokeAsKey(ctx, ctx.routes.policyGet, { params: [project.id] });
  return policyForm(ctx, projects, project, view, view.stored ?? {}, 7, NOT_TRIED, "");
}

/** The check thresholds to try, as typed in the form ("" where left empty: the service's own). */
interface TriedThresholds {
  review: string;
  block: string;
}
const NOT_TRIED: TriedThresholds = { review: "", block: "" };

/**
 * POST /dashboard/policy/preview: the form as edited, with what it would have changed over the
 * project's last days of hits (POST /v1/projects/{id}/bot-policy/replay), before it is saved.
 */
export async function policyPreviewPage(ctx: DashContext): Promise<string | null> {
  const projects = await orgProjects(ctx);
  const project = projects.find((p) => p.id === ctx.query.get("project"));
  if (!project) return null;
  const view = await invokeAsKey(ctx, ctx.routes.policyGet, { params: [project.id] });
  const edited = policyFromForm(ctx.query);
  const days = PREVIEW_DAYS.includes(Number(ctx.query.get("days"))) ? Number(ctx.query.get("days")) : 7;
  const tried = { review: (ctx.query.get("try_review") ?? "").trim().slice(0, 20), block: (ctx.query.get("try_block") ?? "").trim().slice(0, 20) };
  // Either threshold given: the org's checks are replayed too, the other one at the service's value (a typo is the API's 400).
  const thresholds = tried.review || tried.block ? { review: tried.review ? Number(tried.review) : DECISION_THRESHOLDS.review, block: tried.block ? Number(tried.block) : DECISION_THRESHOLDS.block } : undefined;
  let result: string;
  try {
    const replay = await invokeAsKey(ctx, ctx.routes.policyReplay, { params: [project.id], body: { policy: edited, ...(thresholds ? { thresholds } : {}), days, examples: 3 } });
    result = replayResult(replay, thresholds);
  } catch (err) {
    const e = toApiError(err);
    if (e.status >= 500) throw err;
    result = `<div class="flash error" role="alert"><p>This policy cannot be previewed or saved: ${esc(e.message)}</p></div>`;
  }
  return policyForm(ctx, projects, project, view, edited as Partial<BotPolicy>, days, tried, result);
}

/** Days a preview may look back (a choice in the form). */
const PREVIEW_DAYS = [1, 7, 14, 30];

/** The policy page: the project picker, `preview` (a replay's result, or nothing), and the form showing `stored`. */
function policyForm(ctx: DashContext, projects: Array<{ id: string; name: string }>, project: { id: string; name: string }, view: PolicyView, stored: Partial<BotPolicy>, days: number, tried: TriedThresholds, preview: string): string {
  const dry = new Set(Array.isArray(stored.dry_run) ? stored.dry_run : []);
  const dryBox = (rule: string, label: string): string => `<label class="muted"><input type="checkbox" name="dry_run" value="${esc(rule)}" aria-label="Dry run for ${esc(label)}"${dry.has(rule) ? " checked" : ""}> dry run</label>`;
  const picker = `<form method="get" action="/dashboard/policy" class="row"><div>${select("project", "Project", projects.map((p) => [p.id, `${p.name} (${p.id})`]), project.id, "pick-project")}</div><div><button type="submit" class="secondary">Show</button></div></form>`;
  const kindRows = POLICY_KINDS.map((k) => {
    const def = DEFAULT_BOT_POLICY.kinds[k] ?? "score";
    const cur = stored.kinds?.[k] ?? "";
    return `<tr><th scope="row"><label for="kind-${k}">${esc(k)}</label></th><td><select id="kind-${k}" name="kind.${k}">${[["", `default (${def})`], ["allow", "allow"], ["block", "block"], ["score", "score"]].map(([v, l]) => `<option value="${v}"${v === cur ? " selected" : ""}>${l}</option>`).join("")}</select></td><td>${dryBox(`kinds.${k}`, k)}</td><td>${esc(view.policy.kinds[k] ?? "score")}</td></tr>`;
  }).join("");
  const bots = Object.entries(stored.bots ?? {});
  const botRows = bots
    .map(([id, action], i) => `<tr><th scope="row"><label for="bot-${i}">${esc(id)}</label><input type="hidden" name="bot_id" value="${esc(id)}"></th><td><select id="bot-${i}" name="bot_action">${["allow", "block", "remove"].map((v) => `<option value="${v}"${v === action ? " selected" : ""}>${v === "remove" ? "remove this rule" : v}</option>`).join("")}</select></td><td>${dryBox(`bots.${id}`, id)}</td></tr>`)
    .join("");
  const updated = view.updated_at ? `Last changed ${esc(when(view.updated_at))}.` : "This project uses the default policy.";
  const body = `${picker}${preview}<p>${updated} Rules apply in this order, the first that applies wins: spoofed bots, then rules for one bot, then rules for a kind. A change applies to the next hit. A rule in dry run is not applied: the hits it would have decided record what it would have done.</p>
<form method="post" action="/dashboard/policy">${csrfField(ctx.viewer)}<input type="hidden" name="project" value="${esc(project.id)}">
<fieldset><legend>Bots by id</legend>${bots.length ? `<table><thead><tr><th scope="col">Bot id</th><th scope="col">Action</th><th scope="col">Dry run</th></tr></thead><tbody>${botRows}</tbody></table>` : "<p>No rule for a single bot.</p>"}
<div class="row"><div><label for="new-bot">Add a rule for bot id</label><input id="new-bot" name="new_bot_id" list="known-bots" placeholder="gptbot" pattern="[a-z0-9][a-z0-9._\\-]{0,63}" size="20">${knownBots(ctx)}</div>
<div><label for="new-bot-action">Action</label><select id="new-bot-action" name="new_bot_action"><option value="block">block</option><option value="allow">allow</option></select></div></div></fieldset>
<fieldset><legend>Bots by kind</legend><table><thead><tr><th scope="col">Kind</th><th scope="col">Setting</th><th scope="col">Dry run</th><th scope="col">In effect</th></tr></thead><tbody>${kindRows}</tbody></table>
<p class="muted">allow lets verified bots of the kind through (and unverifiable ones when allowed below); block blocks every hit of the kind; score leaves the decision to the score.</p></fieldset>
<fieldset><legend>Spoofed and unverified bots</legend><div class="row">
<div>${select("spoofed", "Bots whose claim failed verification", [["", `default (${DEFAULT_BOT_POLICY.spoofed})`], ["block", "block"], ["score", "score"]], stored.spoofed ?? "")} ${dryBox("spoofed", "spoofed bots")}</div>
<div>${select("allow_unverified", "Let kind allow rules apply to bots that cannot be verified", [["", `default (${DEFAULT_BOT_POLICY.allow_unverified ? "yes" : "no"})`], ["true", "yes"], ["false", "no"]], stored.allow_unverified === undefined ? "" : String(stored.allow_unverified))}</div>
</div></fieldset>
<fieldset><legend>Check thresholds to try (preview only)</legend><p class="muted">POST /v1/check answers allow below ${DECISION_THRESHOLDS.review}, review from ${DECISION_THRESHOLDS.review} and block from ${DECISION_THRESHOLDS.block} of its score. Give others to see, in the preview, what they would have changed over the org's stored checks; a backend may apply them to the score itself. They are not saved.</p><div class="row">
<div><label for="try-review">Review from</label><input id="try-review" name="try_review" type="number" min="0" max="1" step="0.01" placeholder="${DECISION_THRESHOLDS.review}" value="${esc(tried.review)}"></div>
<div><label for="try-block">Block from</label><input id="try-block" name="try_block" type="number" min="0" max="1" step="0.01" placeholder="${DECISION_THRESHOLDS.block}" value="${esc(tried.block)}"></div>
</div></fieldset>
<div class="row"><div>${select("days", "Preview over the last", PREVIEW_DAYS.map((d): [string, string] => [String(d), d === 1 ? "day" : `${d} days`]), String(days))}</div>
<div><button type="submit" formaction="/dashboard/policy/preview" class="secondary">Preview the change</button></div>
<div><button type="submit">Save the policy</button></div></div></form>`;
  return page(`Bot policy of ${project.name}`, body, ctx.viewer, "/dashboard/policy");
}

/** What the page reads of GET bot-policy's answer. */
interface PolicyView {
  policy: BotPolicy;
  updated_at: string | null;
}

/** A replay's answer as the preview shows it: the figures, then the changes by kind and by reason with examples; the checks' when thresholds were tried. */
function replayResult(r: { days: number; hits: ReplayHits; checks: ReplayChecks | null }, thresholds: DecisionThresholds | undefined): string {
  const h = r.hits;
  const period = r.days === 1 ? "the last day" : `the last ${r.days} days`;
  const partial = h.partial ? `<p class="muted">Only the newest ${h.scanned.toLocaleString("en-US")} hits of the period were replayed (the replay's limit).</p>` : "";
  const transitions = h.transitions.map((t) => `<li><span data-field="transition">${esc(t.from)} → ${esc(t.to)}</span>: <span data-field="transition-count">${t.count}</span></li>`).join("");
  const examples = (list: ReplayHits["by_kind"][number]["examples"]): string =>
    list.map((e) => `<li><span class="mono">${esc(e.id)}</span> ${esc(when(e.created_at))}, ${e.page ? `<span class="mono">${esc(e.page)}</span>` : "no page"}, ${e.bot_id ? esc(e.bot_id) : "no bot"}: ${esc(e.from)} → ${esc(e.to)}</li>`).join("");
  const groups = (caption: string, name: "kind" | "reason", list: ReplayHits["by_kind"]): string =>
    list.length === 0
      ? ""
      : `<table data-group="${name}"><caption>${esc(caption)}</caption><thead><tr><th scope="col">${name === "kind" ? "Kind" : "Reason"}</th><th scope="col">Hits</th><th scope="col">Examples</th></tr></thead><tbody>${list
          .map((g) => `<tr><th scope="row" class="mono">${esc(String(g[name]))}</th><td data-field="count">${g.count}</td><td><ul>${examples(g.examples)}</ul></td></tr>`)
          .join("")}</tbody></table>`;
  return `<section class="flash ok" aria-labelledby="preview-title" role="status"><h2 id="preview-title">Preview: this policy over ${period}</h2>
<p><span data-field="replay-scanned">${h.scanned}</span> hits replayed; <span data-field="replay-changed">${h.changed}</span> would be decided differently. Nothing is saved until you press "Save the policy".</p>${partial}
${transitions ? `<ul aria-label="Changes by decision">${transitions}</ul>` : ""}${groups("Changes by kind", "kind", h.by_kind)}${groups("Changes by reason (the rule that would decide, or the score)", "reason", h.by_reason)}${r.checks && thresholds ? checksResult(r.checks, thresholds) : ""}</section>`;
}

/** The checks' part of a replay: the figures, the changes by decision, and by form with examples. */
function checksResult(c: ReplayChecks, t: DecisionThresholds): string {
  const partial = c.partial ? `<p class="muted">Only the newest ${c.scanned.toLocaleString("en-US")} checks of the period were replayed (the replay's limit).</p>` : "";
  const transitions = c.transitions.map((x) => `<li><span data-field="check-transition">${esc(x.from)} → ${esc(x.to)}</span>: ${x.count}</li>`).join("");
  const rows = c.by_form
    .map((g) => {
      const examples = g.examples.map((e) => `<li><span class="mono">${esc(e.request_id)}</span> ${esc(when(e.created_at))}, score ${e.score}: ${esc(e.from)} → ${esc(e.to)}</li>`).join("");
      return `<tr><th scope="row" class="mono">${esc(g.form_id)}</th><td data-field="count">${g.count}</td><td><ul>${examples}</ul></td></tr>`;
    })
    .join("");
  return `<h3 id="checks-preview-title">Checks with review from ${t.review} and block from ${t.block}</h3>
<p><span data-field="checks-scanned">${c.scanned}</span> checks re-decided; <span data-field="checks-changed">${c.changed}</span> would be decided differently.</p>${partial}
${transitions ? `<ul aria-label="Check changes by decision">${transitions}</ul>` : ""}${rows ? `<table data-group="form"><caption>Changes by form</caption><thead><tr><th scope="col">Form</th><th scope="col">Checks</th><th scope="col">Examples</th></tr></thead><tbody>${rows}</tbody></table>` : ""}`;
}

interface ReplayChecks {
  scanned: number;
  changed: number;
  partial: boolean;
  transitions: Array<{ from: string; to: string; count: number }>;
  by_form: Array<{ form_id: string; count: number; examples: Array<{ request_id: string; created_at: string; form_id: string; score: number; from: string; to: string }> }>;
}

interface ReplayHits {
  scanned: number;
  changed: number;
  partial: boolean;
  transitions: Array<{ from: string; to: string; count: number }>;
  by_kind: Array<{ kind?: string; reason?: string; count: number; examples: Array<{ id: string; created_at: string; page: string | null; bot_id: string | null; from: string; to: string }> }>;
  by_reason: ReplayHits["by_kind"];
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
  // A removed bot rule leaves the dry run with it.
  const dryRun = form.getAll("dry_run").filter((r) => !r.startsWith("bots.") || Object.hasOwn(bots, r.slice(5)));
  if (dryRun.length) doc.dry_run = [...new Set(dryRun)];
  return doc;
}

/** POST /dashboard/policy: PUT /v1/projects/{id}/bot-policy with the form's document. */
export async function policyAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "a project's bot policy");
  const projectId = ctx.query.get("project") ?? "";
  const back = `/dashboard/policy?project=${encodeURIComponent(projectId)}`;
  await invokeAsKey(ctx, ctx.routes.policyPut, { params: [projectId], body: policyFromForm(ctx.query) });
  return { redirect: back, flash: { kind: "ok", text: "The bot policy is saved; the next hit follows it." } };
}
