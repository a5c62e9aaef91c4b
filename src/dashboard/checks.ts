import { invokeAsKey, invokeForData, liveChange, showsTestData, type ActionResult, type DashContext } from "./context.js";
import { csrfField, dataToggle, esc, page, select, when } from "./layout.js";

/** Characters of a kept text shown in the list. */
const EXCERPT = 160;

interface CheckItem {
  request_id: string;
  created_at: string;
  form_id: string;
  score: number;
  decision: string;
  spam_probability: number | null;
  org_model: number;
  learnable: boolean;
  text: string | null;
  label: "spam" | "ham" | null;
}

interface Agreement {
  day: string;
  feedback: number;
  org_model: number;
  global_model: number;
}

/**
 * GET /dashboard/checks?decision=&label=&form_id=&cursor=&data=: the org's check history (newest
 * first, filtered) with spam / not spam buttons that send feedback; the org model's panel (its
 * feedback counts and how its agreement with the labels has moved); and the history setting.
 * `data=test`: the test keys' checks and the model their feedback trained (issue 29).
 */
export async function checksPage(ctx: DashContext): Promise<string> {
  const f = {
    decision: pick(ctx.query.get("decision"), ["allow", "review", "block"]),
    label: pick(ctx.query.get("label"), ["spam", "ham", "none"]),
    form_id: (ctx.query.get("form_id") ?? "").trim().slice(0, 200),
  };
  const cursor = ctx.query.get("cursor") ?? "";
  const q = new URLSearchParams({ limit: "50" });
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  const test = showsTestData(ctx.query, ctx.principal.key);
  const shown = new URLSearchParams(q);
  if (test) shown.set("data", "test");
  const filters = shown.toString();
  if (cursor) q.set("cursor", cursor);
  const orgId = ctx.viewer.orgId;
  const [list, figures] = await Promise.all([
    invokeForData(ctx, ctx.routes.checks, { params: [orgId], query: q.toString() }) as Promise<{ items: CheckItem[]; next_cursor: string | null }>,
    invokeForData(ctx, ctx.routes.orgFeedback, { params: [orgId] }),
  ]);
  // Where a button sends the browser back: this very listing.
  const back = `/dashboard/checks?${filters}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  const toggle = dataToggle("/dashboard/checks", new URLSearchParams(Object.entries(f).filter(([, v]) => v !== "")), test, ctx.principal.key.mode === "test");
  const form = `<form method="get" action="/dashboard/checks" class="row" aria-label="Filters">${test ? '<input type="hidden" name="data" value="test">' : ""}
<div>${select("decision", "Decision", [["", "any"], ["allow", "allow"], ["review", "review"], ["block", "block"]], f.decision)}</div>
<div>${select("label", "Feedback", [["", "any"], ["spam", "marked spam"], ["ham", "marked not spam"], ["none", "no feedback yet"]], f.label)}</div>
<div><label for="form_id">Form id</label><input id="form_id" name="form_id" value="${esc(f.form_id)}" placeholder="contact" size="16"></div>
<div><button type="submit">Show</button></div></form>`;
  const rows = list.items.map((c) => checkRow(ctx, c, back)).join("");
  const history = figures.history as { mode: string; days: number };
  const table =
    list.items.length === 0
      ? `<p>No checks match${f.decision || f.label || f.form_id ? " these filters" : history.mode === "none" ? ": this org keeps no history (see the setting below)" : " yet: POST /v1/check has not been called, or its checks are past their retention"}.</p>`
      : `<table><caption class="muted">Checks kept in the org's history, newest first</caption><thead><tr><th scope="col">Time</th><th scope="col">Form</th><th scope="col">Decision</th><th scope="col">Score</th><th scope="col">Content</th><th scope="col">Text</th><th scope="col">Feedback</th></tr></thead><tbody>${rows}</tbody></table>`;
  const more = list.next_cursor ? `<p><a href="/dashboard/checks?${esc(filters)}&amp;cursor=${esc(encodeURIComponent(list.next_cursor))}">Older checks</a></p>` : "";
  return page("Checks", toggle + modelPanel(figures, !test) + form + table + more + historyForm(ctx, history, figures.history.default as boolean), ctx.viewer, "/dashboard/checks");
}

function checkRow(ctx: DashContext, c: CheckItem, back: string): string {
  const text = c.text !== null ? esc(c.text.length > EXCERPT ? `${c.text.slice(0, EXCERPT)}…` : c.text) : `<span class="muted">${c.learnable ? "not kept (features only)" : "no text"}</span>`;
  const content = c.spam_probability === null ? "—" : `${c.spam_probability.toFixed(4)}${c.org_model > 0 ? `<br><span class="muted">org model v${c.org_model}</span>` : ""}`;
  const label = c.label === "spam" ? "marked spam" : c.label === "ham" ? "marked not spam" : "";
  const button = (value: "spam" | "ham", text: string): string =>
    `<form method="post" action="/dashboard/checks/feedback" class="inline">${csrfField(ctx.viewer)}<input type="hidden" name="request_id" value="${esc(c.request_id)}"><input type="hidden" name="label" value="${value}">${showsTestData(ctx.query, ctx.principal.key) ? '<input type="hidden" name="data" value="test">' : ""}<input type="hidden" name="back" value="${esc(back)}"><button type="submit" class="${c.label === value ? "" : "secondary"}" aria-label="${text}: check ${esc(c.request_id)}"${c.label === value ? ' aria-pressed="true"' : ""}>${text}</button></form>`;
  const actions = c.learnable ? `${button("spam", "Spam")} ${button("ham", "Not spam")}` : "";
  return `<tr data-request-id="${esc(c.request_id)}"><td>${esc(when(c.created_at))}<br><span class="mono muted">${esc(c.request_id)}</span></td><td>${esc(c.form_id)}</td><td><span class="decision-${esc(c.decision)}">${esc(c.decision)}</span></td><td>${c.score.toFixed(4)}</td><td>${content}</td><td>${text}</td><td>${label ? `<p data-field="label">${label}</p>` : ""}${actions}</td></tr>`;
}

/** The org model: its feedback counts and the agreement of both models with the labels, per day. */
function modelPanel(figures: { model_version: number; feedback: { spam: number; ham: number; relabelled: number; repeated: number }; agreement: Agreement[] }, live: boolean): string {
  const fb = figures.feedback;
  const card = (label: string, value: string, id: string): string => `<div class="card"><div class="muted" id="${id}-label">${label}</div><div class="v" aria-labelledby="${id}-label" data-field="${id}">${value}</div></div>`;
  const pct = (v: number): string => `${(v * 100).toFixed(0)}%`;
  const days = figures.agreement;
  const total = (pick: (d: Agreement) => number): number => days.reduce((s, d) => s + pick(d) * d.feedback, 0) / Math.max(1, days.reduce((s, d) => s + d.feedback, 0));
  const summary =
    days.length === 0
      ? "<p>No feedback yet: mark checks below as spam or not spam (or send POST /v1/feedback) and the org's own model learns from them; until then every check uses the global model.</p>"
      : `<p>Before learning each label, the org model agreed with ${pct(total((d) => d.org_model))} of them and the global model with ${pct(total((d) => d.global_model))} (${plural(days.reduce((s, d) => s + d.feedback, 0), "label")} since ${esc(days[0]!.day)}).</p>`;
  // Only for the live model (the reset needs a live key), and only when there is one to reset.
  const reset = live && figures.model_version > 0 ? `<p><a class="button danger" href="/dashboard/checks/reset-model/confirm">Reset the org's model</a></p>` : "";
  const recent = days.slice(-14);
  const table = recent.length
    ? `<table><caption class="muted">Agreement with the labels per day (the latest ${plural(recent.length, "day")} with feedback)</caption><thead><tr><th scope="col">Day</th><th scope="col">Labels</th><th scope="col">Org model agreed</th><th scope="col">Global model agreed</th></tr></thead><tbody>${recent
        .map((d) => `<tr><td>${esc(d.day)}</td><td>${d.feedback}</td><td>${pct(d.org_model)}</td><td>${pct(d.global_model)}</td></tr>`)
        .join("")}</tbody></table>`
    : "";
  return `<section aria-labelledby="model-h"><h2 id="model-h">The org's own model</h2><div class="cards">${[
    card("Labelled spam", String(fb.spam), "fb-spam"),
    card("Labelled not spam", String(fb.ham), "fb-ham"),
    card("Relabelled", String(fb.relabelled), "fb-relabelled"),
    card("Model version", figures.model_version === 0 ? "global only" : `v${figures.model_version}`, "model-version"),
  ].join("")}</div>${summary}${table}${reset}</section>`;
}

function historyForm(ctx: DashContext, h: { mode: string; days: number }, isDefault: boolean): string {
  return `<section aria-labelledby="history-h"><h2 id="history-h">What the org keeps of each check</h2>
<form method="post" action="/dashboard/checks/history" class="row">${csrfField(ctx.viewer)}
<div>${select("mode", "Keep", [["features", "the verdict and hashed features (no text)"], ["text", "the verdict and the text"], ["none", "nothing"]], h.mode, "history-mode")}</div>
<div><label for="history-days">Days</label><input id="history-days" name="days" type="number" min="1" max="365" value="${h.days}"></div>
<div><button type="submit">Save the setting</button></div></form>
<p class="muted">${isDefault ? "This is the default. " : ""}Feedback needs the features or the text; a shorter time or "nothing" deletes what is no longer kept at once. The org's model keeps what it learned.</p></section>`;
}

/** POST /dashboard/checks/feedback: POST /v1/feedback for one check of the list. */
export async function checkFeedbackAction(ctx: DashContext): Promise<ActionResult> {
  const label = ctx.query.get("label") ?? "";
  const requestId = ctx.query.get("request_id") ?? "";
  // data=test, or a test key's session: a test check's feedback, which teaches the test keys' model only.
  const r = await invokeForData(ctx, ctx.routes.feedback, { body: { label, request_id: requestId } });
  const said = label === "spam" ? "spam" : "not spam";
  const text = r.outcome === "repeated" ? `Check ${requestId} was already marked ${said}.` : `Check ${requestId} is marked ${said}; the org's model learned it (now v${r.model_version}).`;
  return { redirect: backOf(ctx.query), flash: { kind: "ok", text } };
}

/** POST /dashboard/checks/history: PUT /v1/orgs/{own org}/check-history. */
export async function checkHistoryAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's check history setting");
  const days = Number(ctx.query.get("days"));
  const h = await invokeAsKey(ctx, ctx.routes.historyPut, { params: [ctx.viewer.orgId], body: { mode: ctx.query.get("mode") ?? "", days } });
  const what = h.mode === "none" ? "nothing" : h.mode === "text" ? "the verdict and the text" : "the verdict and hashed features";
  return { redirect: "/dashboard/checks", flash: { kind: "ok", text: `The org now keeps ${what} of each check${h.mode === "none" ? "" : ` for ${h.days} days`}.` } };
}

/** GET /dashboard/checks/reset-model/confirm: what resetting the org's model does, and the button that does it. */
export async function modelResetConfirmPage(ctx: DashContext): Promise<string> {
  const figures = await invokeAsKey(ctx, ctx.routes.orgFeedback, { params: [ctx.viewer.orgId] });
  const fb = figures.feedback as { spam: number; ham: number };
  const body = `<section aria-labelledby="confirm-h"><h2 id="confirm-h">Reset the org's model?</h2>
<p>The org's own model (v${figures.model_version}, learned from ${plural(fb.spam, "spam label")} and ${plural(fb.ham, "not-spam label")}) is forgotten: from the next check on, the org's checks are scored by the global model alone, as a new org's, until its next feedback. Labels given before no longer count; the kept checks and the history setting stay. This cannot be undone.</p>
<form method="post" action="/dashboard/checks/reset-model">${csrfField(ctx.viewer)}<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">Reset the model</button> <a href="/dashboard/checks">Cancel</a></form></section>`;
  return page("Reset the org's model", body, ctx.viewer, "/dashboard/checks");
}

/** POST /dashboard/checks/reset-model {confirm}: POST /v1/orgs/{own org}/model/reset; without confirm=yes, the confirmation page first. */
export async function modelResetAction(ctx: DashContext): Promise<ActionResult> {
  if (ctx.query.get("confirm") !== "yes") return { redirect: "/dashboard/checks/reset-model/confirm" };
  liveChange(ctx, "the org's model");
  await invokeAsKey(ctx, ctx.routes.modelReset, { params: [ctx.viewer.orgId] });
  return { redirect: "/dashboard/checks", flash: { kind: "ok", text: "The org's model is reset: its checks are scored by the global model alone until its next feedback." } };
}

/** The listing a button was pressed on (only a path of this page), else the page itself. */
export function backOf(form: URLSearchParams): string {
  const back = form.get("back") ?? "";
  return /^\/dashboard\/checks(\?[^\s#]*)?$/.test(back) ? back : "/dashboard/checks";
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function pick(v: string | null, allowed: readonly string[]): string {
  return v !== null && allowed.includes(v) ? v : "";
}
