import { ApiError } from "../shared/errors.js";
import { stackedChart, type StackedPoint } from "./chart.js";
import { chooseProject, invokeAsKey, orgProjects, type DashContext } from "./context.js";
import { csvDocument } from "./csv.js";
import { esc, page, select } from "./layout.js";

/**
 * The Traffic page (GET /dashboard/traffic) and its CSV downloads (GET /dashboard/traffic.csv):
 * a project's hits over a time range by decision, kind, reason, bot, network and country, and the
 * org's checks, as GET /v1/projects/{projectId}/traffic counts them (run as the signed-in key).
 */

const DAY = 86_400_000;
const RANGES: Array<[string, string]> = [
  ["24h", "last 24 hours"],
  ["7d", "last 7 days"],
  ["30d", "last 30 days"],
  ["dates", "from and to dates below"],
];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What the page and a download ask for: the project, the range as chosen, and the API's query. */
interface Request {
  range: string;
  from: string;
  to: string;
  /** The query of GET /v1/projects/{projectId}/traffic. */
  apiQuery: string;
}

/** The figures as the API answers them (trafficResponse). */
interface Traffic {
  from: string;
  to: string;
  bucket: "hour" | "day";
  partial: boolean;
  scanned: number;
  totals: { hits: number; allow: number; review: number; block: number };
  series: StackedPoint[];
  kinds: Row[];
  reasons: Row[];
  bots: Row[];
  asns: Row[];
  countries: Row[];
  checks: { partial: boolean; totals: { checks: number }; series: StackedPoint[] };
}
type Row = Record<string, string | number | null> & { hits: number; share: number; blocked: number };

/** Each top table: its name in the CSV link, heading, the column naming its rows, and how a row is named. */
const TABLES: Array<{
  table: "kinds" | "reasons" | "bots" | "asns" | "countries";
  title: string;
  column: string;
  fields: string[];
  name: (r: Row) => string;
  extra?: { head: string; cell: (r: Row) => string | number | null };
}> = [
  { table: "kinds", title: "Hits by kind", column: "Kind", fields: ["kind"], name: (r) => String(r.kind) },
  { table: "reasons", title: "Top reasons", column: "Reason", fields: ["reason"], name: (r) => String(r.reason) },
  {
    table: "bots",
    title: "Top bots",
    column: "Bot id",
    fields: ["bot_id", "bot_name", "bot_kind"],
    name: (r) => String(r.bot_id),
    extra: { head: "Bot", cell: (r) => (r.bot_name === null ? null : `${r.bot_name}${r.bot_kind ? ` (${r.bot_kind})` : ""}`) },
  },
  {
    table: "asns",
    title: "Top networks (ASN)",
    column: "ASN",
    fields: ["asn", "org"],
    name: (r) => (r.asn === null ? "unknown" : `AS${r.asn}`),
    extra: { head: "Organisation", cell: (r) => r.org ?? null },
  },
  { table: "countries", title: "Top countries", column: "Country", fields: ["country"], name: (r) => (r.country === null ? "unknown" : String(r.country)) },
];
const CSV_TABLES = ["decisions", ...TABLES.map((t) => t.table), "checks"] as const;

/** The range of the query (`range`, or `from` and `to` dates, `to` inclusive) as the API's query. */
function requestOf(q: URLSearchParams, nowMs: number): Request {
  const range = RANGES.some(([v]) => v === q.get("range")) ? q.get("range")! : "24h";
  const from = q.get("from") ?? "";
  const to = q.get("to") ?? "";
  if (range === "dates") {
    if (!DATE.test(from) || !DATE.test(to)) throw new ApiError("VALIDATION_ERROR", "Give both dates, from and to, as YYYY-MM-DD.");
    const end = new Date(Date.parse(`${to}T00:00:00Z`) + DAY).toISOString();
    return { range, from, to, apiQuery: new URLSearchParams({ from, to: end }).toString() };
  }
  const span = range === "30d" ? 30 * DAY : range === "7d" ? 7 * DAY : DAY;
  const end = new Date(nowMs).toISOString();
  return { range, from, to, apiQuery: new URLSearchParams({ from: new Date(nowMs - span).toISOString(), to: end }).toString() };
}

/** The project and its figures; an API refusal (a bad date) is a message, not an error page. */
async function load(ctx: DashContext): Promise<{
  projects: Array<{ id: string; name: string }>;
  project: { id: string; name: string } | null;
  req: Request | null;
  data: Traffic | null;
  refusal: string | null;
}> {
  const projects = await orgProjects(ctx);
  const project = chooseProject(projects, ctx.query.get("project"));
  if (!project) return { projects, project, req: null, data: null, refusal: null };
  try {
    const req = requestOf(ctx.query, ctx.nowMs);
    const data = (await invokeAsKey(ctx, ctx.routes.traffic, { params: [project.id], query: req.apiQuery })) as Traffic;
    return { projects, project, req, data, refusal: null };
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "VALIDATION_ERROR") throw err;
    return { projects, project, req: null, data: null, refusal: err.message };
  }
}

/** GET /dashboard/traffic?project=&range=24h|7d|30d|dates&from=&to= */
export async function trafficPage(ctx: DashContext): Promise<string> {
  const { projects, project, req, data, refusal } = await load(ctx);
  if (!project) return page("Traffic", "<p>This org has no project yet: create one under Projects.</p>", ctx.viewer, "/dashboard/traffic");
  const range = req?.range ?? ctx.query.get("range") ?? "24h";
  const form = `<form method="get" action="/dashboard/traffic" class="row" aria-label="Project and time range">
<div>${select(
    "project",
    "Project",
    projects.map((p) => [p.id, `${p.name} (${p.id})`]),
    project.id,
  )}</div>
<div>${select("range", "Time range", RANGES, range)}</div>
<div><label for="from">From (UTC)</label><input id="from" name="from" type="date" value="${esc(ctx.query.get("from") ?? "")}"></div>
<div><label for="to">To (UTC, inclusive)</label><input id="to" name="to" type="date" value="${esc(ctx.query.get("to") ?? "")}"></div>
<div><button type="submit">Show</button></div></form>`;
  if (!data || !req)
    return page("Traffic", `${form}<div class="flash error" role="alert"><p>${esc(refusal ?? "")}</p></div>`, ctx.viewer, "/dashboard/traffic");
  const csv = (table: string): string =>
    `/dashboard/traffic.csv?${esc(new URLSearchParams({ project: project.id, range: req.range, from: req.from, to: req.to, table }).toString())}`;
  const download = (table: string, what: string): string => `<p><a href="${csv(table)}" download>Download ${what} (CSV)</a></p>`;
  const card = (label: string, value: number, id: string): string =>
    `<div class="card"><div class="muted" id="${id}-label">${label}</div><div class="v" aria-labelledby="${id}-label" data-field="${id}">${value.toLocaleString("en-US")}</div></div>`;
  const t = data.totals;
  const partial = data.partial
    ? `<p role="status">Only the newest ${data.scanned.toLocaleString("en-US")} hits of this range were read (FS_TRAFFIC_SCAN_LIMIT): the figures cover the newest part of the range.</p>`
    : "";
  const span = `${data.from.replace("T", " ").slice(0, 16)} to ${data.to.replace("T", " ").slice(0, 16)} UTC, per ${data.bucket}`;
  const sections = TABLES.map((spec) => topSection(spec, data[spec.table], download(spec.table, spec.title.toLowerCase()))).join("");
  const body = `${form}<p class="muted">${esc(project.name)}: ${esc(span)}</p>${partial}
<div class="cards">${card("Hits", t.hits, "hits")}${card("Allowed", t.allow, "allow")}${card("For review", t.review, "review")}${card("Blocked", t.block, "block")}</div>
<section aria-labelledby="decisions-h"><h2 id="decisions-h">Hits over time by decision</h2>${stackedChart("hits-chart", "Hits over time by decision", data.series, data.bucket, "hits")}
${seriesTable("decisions", `Hits per ${data.bucket} by decision`, data.series, data.bucket)}${download("decisions", "hits over time")}</section>
${sections}
<section aria-labelledby="checks-h"><h2 id="checks-h">Checks over time by decision</h2><p class="muted">The org's checks (POST /v1/check) kept in its check history; checks belong to the org, not to a project.${data.checks.partial ? " Only the newest part of the range was read." : ""}</p>
${stackedChart("checks-chart", "Checks over time by decision", data.checks.series, data.bucket, "checks")}${seriesTable("checks", `Checks per ${data.bucket} by decision`, data.checks.series, data.bucket)}${download("checks", "checks over time")}</section>`;
  return page("Traffic", body, ctx.viewer, "/dashboard/traffic");
}

function topSection(spec: (typeof TABLES)[number], rows: Row[], link: string): string {
  const id = `${spec.table}-h`;
  const head = `<th scope="col">${esc(spec.column)}</th>${spec.extra ? `<th scope="col">${esc(spec.extra.head)}</th>` : ""}<th scope="col">Hits</th><th scope="col">Share</th><th scope="col">Blocked</th>`;
  const body = rows
    .map(
      (r) =>
        `<tr><th scope="row" class="mono">${esc(spec.name(r))}</th>${spec.extra ? `<td>${esc(String(spec.extra.cell(r) ?? "—"))}</td>` : ""}<td>${r.hits}</td><td>${(r.share * 100).toFixed(1)}%</td><td>${r.blocked}</td></tr>`,
    )
    .join("");
  const table =
    rows.length === 0 ? "<p>None in this range.</p>" : `<table data-table="${spec.table}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>${link}`;
  return `<section aria-labelledby="${id}"><h2 id="${id}">${esc(spec.title)}</h2>${table}</section>`;
}

/** The numbers of a stacked chart as a table (in a disclosure: the chart's accessible twin). */
function seriesTable(name: string, caption: string, points: readonly StackedPoint[], bucket: "hour" | "day"): string {
  const rows = points
    .map(
      (p) =>
        `<tr><th scope="row">${esc(bucketName(p.start, bucket))}</th><td>${p.allow}</td><td>${p.review}</td><td>${p.block}</td><td>${p.allow + p.review + p.block}</td></tr>`,
    )
    .join("");
  return `<details><summary>${esc(caption)} as a table</summary><table data-table="${name}"><caption class="muted">${esc(caption)} (UTC)</caption><thead><tr><th scope="col">${bucket === "day" ? "Day" : "Hour"}</th><th scope="col">Allow</th><th scope="col">Review</th><th scope="col">Block</th><th scope="col">Total</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

function bucketName(start: string, bucket: "hour" | "day"): string {
  return bucket === "day" ? start.slice(0, 10) : `${start.slice(0, 10)} ${start.slice(11, 16)}`;
}

/**
 * GET /dashboard/traffic.csv?project=&range=&from=&to=&table=: one table of the page as CSV
 * (decisions and checks: one record per bucket; the others: one per row of the top table).
 * @returns null for a project the org does not have
 * @throws ApiError VALIDATION_ERROR for an unknown table or bad dates
 */
export async function trafficCsv(ctx: DashContext): Promise<{ filename: string; csv: string } | null> {
  const table = ctx.query.get("table") ?? "";
  if (!(CSV_TABLES as readonly string[]).includes(table)) throw new ApiError("VALIDATION_ERROR", `table: one of ${CSV_TABLES.join(", ")}.`);
  const projects = await orgProjects(ctx);
  const project = projects.find((p) => p.id === ctx.query.get("project"));
  if (!project) return null;
  const req = requestOf(ctx.query, ctx.nowMs);
  const data = (await invokeAsKey(ctx, ctx.routes.traffic, { params: [project.id], query: req.apiQuery })) as Traffic;
  const filename = `traffic-${project.id}-${table}-${data.from.slice(0, 10)}-${data.to.slice(0, 10)}.csv`;
  if (table === "decisions" || table === "checks") {
    const points = table === "checks" ? data.checks.series : data.series;
    return {
      filename,
      csv: csvDocument(
        ["start", "allow", "review", "block", "total"],
        points.map((p) => [p.start, p.allow, p.review, p.block, p.allow + p.review + p.block]),
      ),
    };
  }
  const spec = TABLES.find((t) => t.table === table)!;
  const rows = data[spec.table];
  return {
    filename,
    csv: csvDocument(
      [...spec.fields, "hits", "share", "blocked"],
      rows.map((r) => [...spec.fields.map((k) => r[k] ?? null), r.hits, r.share, r.blocked]),
    ),
  };
}
