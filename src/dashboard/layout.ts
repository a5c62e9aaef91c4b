import { escapeHtml } from "../http/demo-page.js";
import type { Flash } from "./sessions.js";

/**
 * The dashboard's page shell: one stylesheet (GET /dashboard/style.css), no script, a skip link,
 * a navigation landmark and a main region. Every page is built from escaped text: `esc` for text
 * and attribute values.
 */

export const esc = escapeHtml;

/** What every signed-in page knows about its viewer. */
export interface Viewer {
  orgId: string;
  orgName: string;
  keyId: string;
  csrf: string;
  flash: Flash | null;
}

const NAV: Array<[string, string]> = [
  ["/dashboard", "Overview"],
  ["/dashboard/traffic", "Traffic"],
  ["/dashboard/observations", "Observations"],
  ["/dashboard/checks", "Checks"],
  ["/dashboard/policy", "Bot policy"],
  ["/dashboard/projects", "Projects"],
  ["/dashboard/keys", "Keys"],
  ["/dashboard/webhooks", "Webhooks"],
];

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(viewer: Viewer): string {
  return `<input type="hidden" name="csrf" value="${esc(viewer.csrf)}">`;
}

/** A whole page. `current` is the navigation entry to mark; omitted for signed-out pages. */
export function page(title: string, body: string, viewer: Viewer | null, current?: string): string {
  const nav = viewer
    ? `<nav aria-label="Dashboard"><ul>${NAV.map(([href, label]) => `<li><a href="${href}"${href === current ? ' aria-current="page"' : ""}>${label}</a></li>`).join("")}</ul>
<form method="post" action="/dashboard/logout" class="signout">${csrfField(viewer)}<button type="submit">Sign out</button></form></nav>`
    : "";
  const who = viewer ? `<p class="who">${esc(viewer.orgName)} <span class="muted">(${esc(viewer.orgId)}, signed in with ${esc(viewer.keyId)})</span></p>` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · fraudscore dashboard</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/dashboard/style.css"></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><p class="brand">fraudscore dashboard</p>${who}${nav}</header>
<main id="main" tabindex="-1"><h1>${esc(title)}</h1>
${viewer?.flash ? flashBox(viewer.flash) : ""}${body}</main></body></html>
`;
}

/** A change's outcome, announced to screen readers (role status / alert). */
export function flashBox(flash: Flash): string {
  const secret = flash.secret
    ? `<p><label for="new-secret">The new key (shown once, copy it now):</label><br><input id="new-secret" class="secret" readonly value="${esc(flash.secret)}" size="60"></p>`
    : "";
  return `<div class="flash ${flash.kind}" role="${flash.kind === "error" ? "alert" : "status"}"><p>${esc(flash.text)}</p>${secret}</div>`;
}

/** An error page for anything that went wrong (never a stack trace). */
export function errorPage(status: number, title: string, text: string, viewer: Viewer | null): string {
  return page(title, `<p>${esc(text)}</p><p><a href="/dashboard">Back to the dashboard</a></p><p class="muted">HTTP ${status}</p>`, viewer);
}

/**
 * The live / test data switch of a page that lists recorded data (issue 29): live data unless
 * `data=test`. `query` is the page's query without `data`; the current mode is marked, not linked.
 */
export function dataToggle(path: string, query: URLSearchParams, test: boolean, testKey = false): string {
  // A test key's session shows the test data only (context.ts showsTestData): nothing to switch to.
  if (testKey) return `<p class="data-toggle" data-mode="test">Showing: <strong aria-current="true">test data</strong> <span class="muted">(you signed in with a test key, which sees what test keys recorded only)</span></p>`;
  const href = (mode: "live" | "test"): string => {
    const q = new URLSearchParams(query);
    if (mode === "test") q.set("data", "test");
    const text = q.toString();
    return esc(text ? `${path}?${text}` : path);
  };
  const item = (mode: "live" | "test", label: string): string =>
    mode === (test ? "test" : "live") ? `<strong aria-current="true">${label}</strong>` : `<a href="${href(mode)}">${label}</a>`;
  return `<p class="data-toggle" data-mode="${test ? "test" : "live"}">Showing: ${item("live", "live data")} · ${item("test", "test data")} <span class="muted">(what test keys, fs_test_ and fs_pub_test_, recorded)</span></p>`;
}

/** A select element with a label; `options` are [value, label] pairs. */
export function select(name: string, label: string, options: Array<[string, string]>, selected: string, id = name): string {
  return `<label for="${esc(id)}">${esc(label)}</label><select id="${esc(id)}" name="${esc(name)}">${options
    .map(([v, l]) => `<option value="${esc(v)}"${v === selected ? " selected" : ""}>${esc(l)}</option>`)
    .join("")}</select>`;
}

/** Date and time in UTC, to the second. */
export function when(iso: string | number): string {
  return new Date(iso).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/**
 * The stylesheet. Colours meet WCAG AA contrast on white (text #1b1f24 is 16:1, links and
 * buttons #0b57d0 6.4:1, muted #4b5563 7.5:1); focus is a thick outline that keyboard users see.
 */
export const STYLESHEET = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1f24;background:#fff}
header{background:#f3f4f6;border-bottom:1px solid #d1d5db;padding:.5rem 1rem}
.brand{font-weight:700;margin:0}.who{margin:.2rem 0}
nav{display:flex;flex-wrap:wrap;align-items:center;gap:1rem}nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700;text-decoration:underline 3px}
main{max-width:1100px;margin:0 auto;padding:1rem}main:focus{outline:none}
a{color:#0b57d0}a:hover{color:#083c91}
:focus-visible{outline:3px solid #b45309;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.5rem;z-index:1}
button,.button{font:inherit;background:#0b57d0;color:#fff;border:0;border-radius:4px;padding:.45rem 1rem;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:#fff;color:#0b57d0;border:2px solid #0b57d0}button.danger,.button.danger{background:#b91c1c}
button:hover{filter:brightness(1.1)}
input,select,textarea{font:inherit;padding:.35rem;border:1px solid #6b7280;border-radius:4px;color:#1b1f24;background:#fff}
label{font-weight:600;margin-right:.4rem}
form.inline{display:inline}.row{display:flex;flex-wrap:wrap;gap:.75rem 1.5rem;align-items:end;margin:.5rem 0}
.row>div{display:flex;flex-direction:column}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d1d5db;vertical-align:top}
th{background:#f3f4f6}
.muted{color:#4b5563}.mono{font-family:ui-monospace,monospace;font-size:.9em}td.mono{word-break:break-all}
.flash{border-radius:4px;padding:.25rem 1rem;margin:1rem 0}.flash.ok{background:#ecfdf5;border:1px solid #047857}.flash.error{background:#fef2f2;border:1px solid #b91c1c}
.secret{font-family:ui-monospace,monospace;width:100%}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0}
.decision-allow{color:#047857;font-weight:600}.decision-review{color:#92400e;font-weight:600}.decision-block{color:#b91c1c;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:.75rem;margin:1rem 0}
.card{border:1px solid #d1d5db;border-radius:6px;padding:.5rem .75rem}.card .v{font-size:1.4rem;font-weight:700}
fieldset{border:1px solid #d1d5db;border-radius:6px;margin:1rem 0}legend{font-weight:700}
svg text{font:12px system-ui,sans-serif;fill:#1b1f24}
`;
