import { ApiError } from "../shared/errors.js";
import { ackOrThrow } from "../http/routes/ack.js";
import { creditsChart } from "./chart.js";
import { invokeAsKey, liveChange, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, when } from "./layout.js";

/** GET /dashboard: plan, quota, used, remaining, period end, subscription, credits per day, billing. */
export async function overviewPage(ctx: DashContext): Promise<string> {
  const u = await invokeAsKey(ctx, ctx.routes.usage, { params: [ctx.viewer.orgId] });
  ctx.deps.flushLedger();
  const daily = ackOrThrow(await ctx.deps.store.send({ op: "usage.daily", orgId: ctx.viewer.orgId, nowMs: ctx.nowMs }));
  const projects = await orgProjects(ctx);
  await ctx.deps.beacon.budget.ready(
    ctx.viewer.orgId,
    projects.map((p) => p.id),
    ctx.nowMs,
  );
  const card = (label: string, value: string, id: string): string => `<div class="card"><div class="muted" id="${id}-label">${label}</div><div class="v" aria-labelledby="${id}-label" data-field="${id}">${value}</div></div>`;
  const num = (n: number | null): string => (n === null ? "unlimited" : n.toLocaleString("en-US"));
  const cards = [
    card("Plan", esc(u.plan), "plan"),
    card("Monthly quota", num(u.monthly_quota), "quota"),
    card("Used", num(u.used), "used"),
    card("Remaining", num(u.remaining), "remaining"),
    card("Period ends", esc(when(u.period_end)), "period-end"),
    card("Subscription", esc(u.subscription_status) + (u.trial_end ? ` <span class="muted">(trial ends ${esc(when(u.trial_end))})</span>` : ""), "subscription"),
  ].join("");
  const back = ctx.query.get("billing");
  const returned = back === "done" ? `<div class="flash ok" role="status"><p>Back from Stripe Checkout. The subscription shows here once Stripe has confirmed it (usually within seconds).</p></div>` : back === "canceled" ? `<div class="flash ok" role="status"><p>Checkout was canceled; nothing changed.</p></div>` : "";
  const overage = u.overage > 0 ? `<p>Overage this period: ${num(u.overage)} credits (${num(u.overage_reported)} reported to Stripe, ${num(u.overage_pending)} pending).</p>` : "";
  return page("Overview", `${returned}<section aria-labelledby="usage-h"><h2 id="usage-h">Usage, ${esc(periodName(u.period, u.period_end))}</h2><div class="cards">${cards}</div>${overage}
<h3>Credits per day</h3>${creditsChart(daily.period, daily.days, ctx.nowMs)}</section>
${observationsSection(ctx, card, num, projects)}
${billingSection(ctx)}`, ctx.viewer, "/dashboard");
}

/**
 * The usage period in words: "November 2026" for a calendar month, "from 15 November 2026" for a
 * billing period that starts on another day (`period` is the YYYYMM of its start).
 */
export function periodName(period: string, periodEnd: string): string {
  const year = Number(period.slice(0, 4));
  const month = Number(period.slice(4, 6)) - 1;
  const end = new Date(periodEnd);
  const monthName = (d: Date) => d.toLocaleString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
  const start = new Date(Date.UTC(year, month, 1));
  const calendar = end.getUTCDate() === 1 && end.getUTCHours() === 0 && end.getUTCMinutes() === 0 && end.getTime() === Date.UTC(year, month + 1, 1);
  return calendar ? monthName(start) : `period ending ${end.toLocaleString("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" })}`;
}

/**
 * Beacon observations recorded and dropped today against the org's daily budget, and per
 * project against its own (beacon/budget.ts).
 */
function observationsSection(ctx: DashContext, card: (label: string, value: string, id: string) => string, num: (n: number | null) => string, projects: ReadonlyArray<{ id: string; name: string }>): string {
  const s = ctx.deps.beacon.budget.standing(ctx.viewer.orgId, ctx.nowMs);
  const cards = [card("Recorded today", num(s.recorded), "obs-recorded"), card("Daily budget", num(s.budget), "obs-budget"), card("Dropped today", num(s.dropped), "obs-dropped")].join("");
  const rows = projects
    .map((p) => {
      const ps = ctx.deps.beacon.budget.projectStanding(p.id, ctx.nowMs);
      const use = ps.budget === null || ps.budget === 0 ? "" : ` (${Math.min(100, Math.round((ps.recorded / ps.budget) * 100))}%)`;
      return `<tr data-project="${esc(p.id)}"><th scope="row">${esc(p.name)} <span class="muted mono">${esc(p.id)}</span></th><td data-field="prj-recorded">${num(ps.recorded)}${use}</td><td data-field="prj-budget">${num(ps.budget)}</td><td data-field="prj-dropped">${num(ps.dropped)}</td></tr>`;
    })
    .join("");
  const table = rows
    ? `<table><caption class="muted">Per project today: observations stored against the project's budget, and hits whose full observation was dropped past a budget (the org's, the project's, or an address network's share; their sessions and verdicts were still updated).</caption><thead><tr><th scope="col">Project</th><th scope="col">Recorded</th><th scope="col">Budget</th><th scope="col">Dropped</th></tr></thead><tbody>${rows}</tbody></table>`
    : "";
  const note =
    s.dropped > 0
      ? `<p role="status">An observation budget was used up today (the org's, a project's, or an address network's share): beacon hits past it still update their sessions and verdicts, but their full observations are not stored, so they are missing from the observation listings until the day ends (UTC). The operator sets the budgets (FS_OBSERVATION_BUDGET_PER_DAY, FS_OBSERVATION_BUDGET_PROJECT_PER_DAY, FS_OBSERVATION_BUDGET_PREFIX_PER_DAY).</p>`
      : "";
  return `<section aria-labelledby="obs-h"><h2 id="obs-h">Beacon observations, ${esc(s.day)} (UTC)</h2><div class="cards">${cards}</div>${note}${table}</section>`;
}

function billingSection(ctx: DashContext): string {
  if (!ctx.deps.billing) return `<section aria-labelledby="billing-h"><h2 id="billing-h">Billing</h2><p class="muted">Billing is not configured on this installation.</p></section>`;
  const test = ctx.principal.key.mode === "test";
  const canBill = ctx.principal.key.scopes.includes("billing") && !test;
  const note = canBill
    ? ""
    : test
      ? `<p class="muted">These buttons need a live secret key with the <code>billing</code> scope; you are signed in with a test key.</p>`
      : `<p class="muted">These buttons need a secret key with the <code>billing</code> scope; you are signed in with a key without it.</p>`;
  const dis = canBill ? "" : " disabled";
  return `<section aria-labelledby="billing-h"><h2 id="billing-h">Billing</h2>${note}
<form method="post" action="/dashboard/billing/checkout" class="row">${csrfField(ctx.viewer)}
<div><label for="plan">Plan</label><select id="plan" name="plan"${dis}><option value="pro">Pro</option><option value="business">Business</option></select></div>
<div><button type="submit"${dis}>Upgrade (Stripe Checkout)</button></div></form>
<form method="post" action="/dashboard/billing/portal">${csrfField(ctx.viewer)}<button type="submit" class="secondary"${dis}>Open the billing portal</button></form></section>`;
}

/** Where Stripe sends the browser back: FS_PUBLIC_URL when set, else the address the browser used. */
function returnBase(ctx: DashContext): string {
  return ctx.deps.billing?.publicUrl ?? ctx.base;
}

/** POST /dashboard/billing/checkout: the API's checkout for the session's org, then off to Stripe. */
export async function checkoutAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's billing");
  const plan = ctx.query.get("plan") ?? "";
  const base = returnBase(ctx);
  const data = await invokeAsKey(ctx, ctx.routes.checkout, {
    params: [ctx.viewer.orgId],
    body: { plan, success_url: `${base}/dashboard?billing=done`, cancel_url: `${base}/dashboard?billing=canceled` },
  });
  return { redirect: stripeUrl(data.url) };
}

/** POST /dashboard/billing/portal: the API's portal session, then off to Stripe. */
export async function portalAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's billing");
  const data = await invokeAsKey(ctx, ctx.routes.portal, { params: [ctx.viewer.orgId], body: { return_url: `${returnBase(ctx)}/dashboard` } });
  return { redirect: stripeUrl(data.url) };
}

/** Only an absolute http(s) URL from the payment provider is followed. */
function stripeUrl(url: unknown): string {
  if (typeof url === "string" && /^https?:\/\//.test(url)) return url;
  throw new ApiError("PAYMENT_PROVIDER_ERROR", "Stripe answered without a URL to go to. Nothing was changed; retry later.");
}
