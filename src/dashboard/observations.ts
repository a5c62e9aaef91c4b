import { POLICY_KINDS } from "../scoring/bot-policy.js";
import { scopedId, type ObservationRecord } from "../store/records.js";
import { listObservations, syncObservations } from "../http/routes/observations.get.js";
import { chooseProject, orgProjects, showsTestData, type DashContext } from "./context.js";
import { dataToggle, esc, page, select, when } from "./layout.js";
import { explainReason } from "./reasons.js";

/** Hits shown per page, and most hits examined for one page of a filtered listing. */
const PER_PAGE = 50;
const SCAN_MAX = 5000;

interface Filters {
  decision: string;
  botKind: string;
  reason: string;
  session: string;
}

/**
 * The latest hits that pass the filters, newest first, read as GET /v1/projects/{id}/observations
 * reads them (listObservations, session filter included), the other filters applied here. Returns
 * the cursor of the next page: the sequence number to continue below, or null at the end.
 * `projectId` as stored: scoped for the test data (records.ts scopedId).
 */
export async function filteredHits(ctx: DashContext, projectId: string, f: Filters, before: number): Promise<{ items: ObservationRecord[]; next: number | null }> {
  const items: ObservationRecord[] = [];
  let cursor = before;
  let scanned = 0;
  while (items.length < PER_PAGE && scanned < SCAN_MAX) {
    const pageOf = await listObservations(ctx.deps, projectId, { limit: 100, before: cursor, sessionId: f.session || undefined, kind: undefined });
    for (const o of pageOf.items) {
      scanned++;
      cursor = o.seq;
      if (!matches(o, f)) continue;
      items.push(o);
      if (items.length === PER_PAGE) return { items, next: o.seq > 1 ? o.seq : null };
    }
    if (pageOf.next === null) return { items, next: null };
    cursor = Math.min(cursor, parseInt(pageOf.next, 36));
  }
  return { items, next: cursor > 1 ? cursor : null };
}

function matches(o: ObservationRecord, f: Filters): boolean {
  if (f.decision && o.decision !== f.decision) return false;
  if (f.botKind === "none" ? o.ua.bot_kind !== null : f.botKind && o.ua.bot_kind !== f.botKind) return false;
  if (f.reason && !o.reasons.some((r) => r.startsWith(f.reason))) return false;
  return true;
}

function decisionCell(d: string): string {
  return `<span class="decision-${esc(d)}">${esc(d)}</span>`;
}

/** GET /dashboard/observations?project=&decision=&bot_kind=&reason=&session=&before=&data= (`data=test`: the test keys' hits, issue 29) */
export async function observationsPage(ctx: DashContext): Promise<string> {
  const projects = await orgProjects(ctx);
  const project = chooseProject(projects, ctx.query.get("project"));
  if (!project) return page("Observations", "<p>This org has no project yet: create one under Projects.</p>", ctx.viewer, "/dashboard/observations");
  const f: Filters = {
    decision: pick(ctx.query.get("decision"), ["allow", "review", "block"]),
    botKind: pick(ctx.query.get("bot_kind"), ["none", ...POLICY_KINDS]),
    reason: (ctx.query.get("reason") ?? "").trim().slice(0, 100),
    session: (ctx.query.get("session") ?? "").trim().slice(0, 64),
  };
  const beforeText = ctx.query.get("before");
  const before = seqOf(beforeText) ?? Number.MAX_SAFE_INTEGER;
  const test = showsTestData(ctx.query, ctx.principal.key);
  // What the links of this page carry to stay on the data shown.
  const mode = test ? "&amp;data=test" : "";
  await syncObservations(ctx.deps);
  const { items, next } = await filteredHits(ctx, scopedId(project.id, test), f, before);
  const form = `<form method="get" action="/dashboard/observations" class="row" aria-label="Filters">${test ? '<input type="hidden" name="data" value="test">' : ""}
<div>${select("project", "Project", projects.map((p) => [p.id, `${p.name} (${p.id})`]), project.id)}</div>
<div>${select("decision", "Decision", [["", "any"], ["allow", "allow"], ["review", "review"], ["block", "block"]], f.decision)}</div>
<div>${select("bot_kind", "Bot kind", [["", "any"], ["none", "not a bot"], ...POLICY_KINDS.map((k): [string, string] => [k, k])], f.botKind)}</div>
<div><label for="reason">Reason starts with</label><input id="reason" name="reason" value="${esc(f.reason)}" placeholder="bot:spoofed" size="16"></div>
<div><label for="session">Session id</label><input id="session" name="session" value="${esc(f.session)}" placeholder="s_…" size="26"></div>
<div><button type="submit">Show</button></div></form>`;
  const rows = items
    .map((o) => `<tr><td><a href="/dashboard/observations/hit?project=${esc(project.id)}&amp;seq=${o.seq}${mode}">${esc(when(o.ts))}</a></td><td>${esc(o.kind)}<br><span class="muted">${esc(o.action)}</span></td>
<td>${decisionCell(o.decision)}${o.policy ? `<br><span class="muted">policy ${esc(o.policy.rule)}</span>` : ""}${o.dry_run ? `<br><span class="muted">dry run ${esc(o.dry_run.rule)}: would ${esc(o.dry_run.action)}</span>` : ""}</td><td>${o.score.toFixed(4)}</td>
<td>${o.bot_id ? esc(o.bot_id) : "—"}${o.ua.bot_kind ? `<br><span class="muted">${esc(o.ua.bot_kind)}${o.bot_verified === true ? ", verified" : o.bot_verified === false ? ", spoofed" : ""}</span>` : ""}</td>
<td class="mono">${o.reasons.map(esc).join("<br>") || "—"}</td><td>${o.page ? `<span class="mono">${esc(o.page)}</span>` : "—"}</td><td class="mono">${o.ip ? esc(o.ip) : "—"}</td><td>${o.country ? esc(o.country) : "—"}</td><td class="mono">${esc(o.session_id)}</td></tr>`)
    .join("");
  const table = items.length === 0
    ? `<p>No hits match${f.decision || f.botKind || f.reason || f.session ? " these filters" : ` yet: the beacon has not reported any for this project${test ? " with a test key (fs_pub_test_)" : ""}`}.</p>`
    : `<table><caption class="muted">Latest hits of ${esc(project.name)}, newest first</caption><thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Decision</th><th scope="col">Score</th><th scope="col">Bot</th><th scope="col">Reasons</th><th scope="col">Page</th><th scope="col">Address</th><th scope="col">Country</th><th scope="col">Session</th></tr></thead><tbody>${rows}</tbody></table>`;
  const q = new URLSearchParams({ project: project.id, decision: f.decision, bot_kind: f.botKind, reason: f.reason, session: f.session });
  const more = next !== null ? `<p><a href="/dashboard/observations?${esc(q.toString())}&amp;before=${next}${mode}">Older hits</a></p>` : "";
  return page("Observations", dataToggle("/dashboard/observations", q, test, ctx.principal.key.mode === "test") + form + table + more, ctx.viewer, "/dashboard/observations");
}

/** GET /dashboard/observations/hit?project=&seq=&data=: one hit with every reason explained (`data=test`: a test key's hit). */
export async function hitPage(ctx: DashContext): Promise<string | null> {
  const projects = await orgProjects(ctx);
  const project = projects.find((p) => p.id === ctx.query.get("project"));
  const seq = seqOf(ctx.query.get("seq"));
  if (!project || seq === null) return null;
  const test = showsTestData(ctx.query, ctx.principal.key);
  const mode = test ? "&amp;data=test" : "";
  await syncObservations(ctx.deps);
  const o = (await listObservations(ctx.deps, scopedId(project.id, test), { limit: 1, before: seq + 1, sessionId: undefined, kind: undefined })).items[0];
  if (!o || o.seq !== seq) return null;
  const fact = (k: string, v: string): string => `<dt>${k}</dt><dd>${v}</dd>`;
  const dash = (v: string | null | undefined): string => (v === null || v === undefined || v === "" ? "—" : esc(v));
  const facts = [
    fact("Observation", `<span class="mono">${esc(o.id)}</span>`),
    fact("Time", esc(when(o.ts))),
    fact("Kind", `${esc(o.kind)} (action ${esc(o.action)})`),
    fact("Decision", decisionCell(o.decision)),
    fact("Score", `${o.score.toFixed(4)} <span class="muted">(allow below 0.45, review below 0.8, block from 0.8)</span>`),
    fact("Policy", o.policy ? `${esc(o.policy.action)} by rule <span class="mono">${esc(o.policy.rule)}</span>` : "no rule applied; the score decided"),
    ...(o.dry_run ? [fact("Dry run", `rule <span class="mono">${esc(o.dry_run.rule)}</span> would have decided ${esc(o.dry_run.action)}; it is in dry run, so it did not`)] : []),
    fact("Session", `<a class="mono" href="/dashboard/observations?project=${esc(project.id)}&amp;session=${esc(o.session_id)}${mode}">${esc(o.session_id)}</a>`),
    fact("Browser", `${dash(o.ua.browser)} on ${dash(o.ua.os)}${o.ua.device ? ` (${esc(o.ua.device)})` : ""}`),
    fact("Bot", o.bot_id ? `${esc(o.bot_id)}${o.ua.bot_name ? ` (${esc(o.ua.bot_name)})` : ""}, kind ${dash(o.ua.bot_kind)}, operator ${dash(o.bot_operator)}, ${o.bot_verified === true ? "verified" : o.bot_verified === false ? "spoofed (verification failed)" : "not verifiable"}` : o.ua.bot_kind ? `kind ${esc(o.ua.bot_kind)}` : "not a bot"),
    fact("Address", `${dash(o.ip)}${o.country ? ` (${esc(o.country)})` : ""}`),
    fact("Page", dash(o.page)),
    fact("Handshake token", o.token_valid ? "valid" : "missing or invalid"),
    fact("Client tells", o.tells.length ? esc(o.tells.join(", ")) : "none"),
    fact("Fingerprint", dash(o.fingerprint)),
  ].join("");
  const reasons = o.reasons.length
    ? `<table><thead><tr><th scope="col">Reason</th><th scope="col">What it means</th></tr></thead><tbody>${o.reasons.map((r) => `<tr><td class="mono">${esc(r)}</td><td>${esc(explainReason(r))}</td></tr>`).join("")}</tbody></table>`
    : "<p>No reasons: nothing about this hit looked like a bot or automation.</p>";
  return page("Hit in detail", `<p><a href="/dashboard/observations?project=${esc(project.id)}${mode}">Back to the ${test ? "test " : ""}hits of ${esc(project.name)}</a></p>
<dl class="facts">${facts}</dl><h2>Reasons</h2>${reasons}`, ctx.viewer, "/dashboard/observations");
}

/**
 * An observation sequence number of a query, or null. 16 digits: on PostgreSQL they are
 * microseconds since the epoch (pg/cluster.ts observationSeqs).
 */
function seqOf(text: string | null): number | null {
  if (text === null || !/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

function pick(v: string | null, allowed: readonly string[]): string {
  return v !== null && allowed.includes(v) ? v : "";
}
