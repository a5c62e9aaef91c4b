import { invokeOwn, liveChange, orgProjects, type ActionResult, type DashContext } from "./context.js";
import { csrfField, esc, page, when } from "./layout.js";

/** GET /dashboard/projects: the org's projects and the page origins each allows; create a project. */
export async function projectsPage(ctx: DashContext): Promise<string> {
  const projects = await orgProjects(ctx);
  const list = projects
    .map((p, i) => `<section aria-labelledby="p-${i}"><h2 id="p-${i}">${esc(p.name)} <span class="muted mono">${esc(p.id)}</span></h2>
<p class="muted">Created ${esc(when(p.created_at))}. <a href="/dashboard/policy?project=${esc(p.id)}">Bot policy</a> · <a href="/dashboard/observations?project=${esc(p.id)}">Hits</a></p>
<form method="post" action="/dashboard/projects/origins">${csrfField(ctx.viewer)}<input type="hidden" name="project" value="${esc(p.id)}">
<label for="origins-${i}">Allowed origins, one per line (empty: any origin)</label><br>
<textarea id="origins-${i}" name="origins" rows="3" cols="60" aria-describedby="origins-help">${esc(p.allowed_origins.join("\n"))}</textarea><br>
<button type="submit">Save the origins</button></form></section>`)
    .join("");
  const body = `<p id="origins-help" class="muted">Page origins that may use a project's publishable key: <code>https://shop.example.com</code>, <code>https://*.example.com</code> (subdomains) or <code>*</code>. Applies to the next beacon call.</p>
${list || "<p>No project yet.</p>"}
<section aria-labelledby="new-h"><h2 id="new-h">New project</h2><form method="post" action="/dashboard/projects" class="row">${csrfField(ctx.viewer)}
<div><label for="project-name">Name</label><input id="project-name" name="name" required maxlength="200" placeholder="shop.example.com"></div><div><button type="submit">Create the project</button></div></form></section>`;
  return page("Projects", body, ctx.viewer, "/dashboard/projects");
}

/** POST /dashboard/projects: POST /v1/admin/orgs/{own org}/projects. */
export async function projectCreateAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "the org's projects");
  const p = await invokeOwn(ctx, ctx.routes.projectCreate, { params: [ctx.viewer.orgId], body: { name: (ctx.query.get("name") ?? "").trim() } });
  return { redirect: "/dashboard/projects", flash: { kind: "ok", text: `Project ${p.name} (${p.id}) created. Create a publishable key for it under Keys.` } };
}

/** POST /dashboard/projects/origins: PATCH /v1/admin/orgs/{own org}/projects/{id}; the store refuses a project of another org. */
export async function projectOriginsAction(ctx: DashContext): Promise<ActionResult> {
  liveChange(ctx, "a project's allowed origins");
  const projectId = ctx.query.get("project") ?? "";
  const origins = (ctx.query.get("origins") ?? "").split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
  const p = await invokeOwn(ctx, ctx.routes.projectPatch, { params: [ctx.viewer.orgId, projectId], body: { allowed_origins: origins } });
  return { redirect: "/dashboard/projects", flash: { kind: "ok", text: `Allowed origins of ${p.name} saved (${p.allowed_origins.length === 0 ? "any origin" : p.allowed_origins.join(", ")}).` } };
}
