import type { KeyPrincipal } from "../front/auth.js";
import { mayChangeLive, refuse } from "../front/capabilities.js";
import type { KeyRecord } from "../store/records.js";
import type { AppDeps } from "../http/deps.js";
import { checkoutPost, portalPost } from "../http/routes/billing.js";
import { botPolicyGet, botPolicyPut } from "../http/routes/bot-policy.js";
import { botPolicyReplayPost } from "../http/routes/bot-policy-replay.post.js";
import { adminKeyDisablePost } from "../http/routes/admin/key-disable.post.js";
import { adminKeyEnablePost } from "../http/routes/admin/key-enable.post.js";
import { adminKeyRollPost } from "../http/routes/admin/key-roll.post.js";
import { adminKeyDelete } from "../http/routes/admin/key.delete.js";
import { adminKeysPost } from "../http/routes/admin/keys.post.js";
import { adminKeysGet, adminProjectsGet } from "../http/routes/admin/lists.get.js";
import { adminProjectPatch } from "../http/routes/admin/project.patch.js";
import { adminProjectsPost } from "../http/routes/admin/projects.post.js";
import { usageGet } from "../http/routes/usage.get.js";
import { checksGet } from "../http/routes/checks.get.js";
import { checkHistoryPut } from "../http/routes/check-history.js";
import { feedbackPost } from "../http/routes/feedback.post.js";
import { orgFeedbackGet } from "../http/routes/org-feedback.get.js";
import { orgModelResetPost } from "../http/routes/org-model-reset.post.js";
import { webhookDelete } from "../http/routes/webhooks/webhook.delete.js";
import { webhookDeliveriesGet } from "../http/routes/webhooks/webhook-deliveries.get.js";
import { webhookRollPost } from "../http/routes/webhooks/webhook-roll.post.js";
import { webhooksGet } from "../http/routes/webhooks/webhooks.get.js";
import { webhooksPost } from "../http/routes/webhooks/webhooks.post.js";
import { trafficGet } from "../http/routes/traffic.get.js";
import { callRoute } from "../http/pipeline.js";
import type { Route } from "../http/route.js";
import type { Flash } from "./sessions.js";
import type { Viewer } from "./layout.js";

/** The API routes the dashboard runs in-process (http/pipeline.ts callRoute), built once. */
export function dashboardRoutes(deps: AppDeps) {
  return {
    usage: usageGet(deps),
    checkout: checkoutPost(deps),
    portal: portalPost(deps),
    policyGet: botPolicyGet(deps),
    policyPut: botPolicyPut(deps),
    policyReplay: botPolicyReplayPost(deps),
    projects: adminProjectsGet(deps),
    projectCreate: adminProjectsPost(deps),
    projectPatch: adminProjectPatch(deps),
    keys: adminKeysGet(deps),
    keyCreate: adminKeysPost(deps),
    keyDisable: adminKeyDisablePost(deps),
    keyEnable: adminKeyEnablePost(deps),
    keyRoll: adminKeyRollPost(deps),
    keyDelete: adminKeyDelete(deps),
    checks: checksGet(deps),
    feedback: feedbackPost(deps),
    orgFeedback: orgFeedbackGet(deps),
    modelReset: orgModelResetPost(deps),
    historyPut: checkHistoryPut(deps),
    webhooks: webhooksGet(deps, "org"),
    webhookCreate: webhooksPost(deps, "org"),
    webhookDelete: webhookDelete(deps, "org"),
    webhookRoll: webhookRollPost(deps, "org"),
    webhookDeliveries: webhookDeliveriesGet(deps, "org"),
    traffic: trafficGet(deps),
  };
}

export type DashboardRoutes = ReturnType<typeof dashboardRoutes>;

/** What a page or an action of a signed-in session works with. */
export interface DashContext {
  deps: AppDeps;
  routes: DashboardRoutes;
  viewer: Viewer;
  principal: KeyPrincipal;
  nowMs: number;
  /** The request's query string (GET) or form fields (POST). */
  query: URLSearchParams;
  /** scheme://host of this service as the browser reached it (return URLs for Stripe). */
  base: string;
}

/** What a form POST does: where the browser goes next (303), and the message it will see there. */
export interface ActionResult {
  redirect: string;
  flash?: Flash;
  /** The session ends (sign out, or the signed-in key was disabled). */
  endSession?: boolean;
}

/** The org's projects (first 100), via the admin listing for the session's own org. */
export async function orgProjects(ctx: DashContext): Promise<Array<{ id: string; name: string; created_at: string; allowed_origins: string[] }>> {
  const page = await invokeOwn(ctx, ctx.routes.projects, { params: [ctx.viewer.orgId], query: "limit=100" });
  return page.items;
}

/** An admin route run through the pipeline (callRoute) for the session's own org. */
export function invokeOwn(ctx: DashContext, route: Route<any>, call: { params: string[]; query?: string; body?: unknown }): Promise<any> {
  return callRoute(route, ctx.principal, { ...call, nowMs: ctx.nowMs, ownOrg: true });
}

/** A secret-key route run through the pipeline (callRoute) as the signed-in key. */
export function invokeAsKey(ctx: DashContext, route: Route<any>, call: { params?: string[]; query?: string; body?: unknown }): Promise<any> {
  return callRoute(route, ctx.principal, { ...call, nowMs: ctx.nowMs });
}

/**
 * Whether a page shows the test data (`data=test`, issue 29) rather than the live data, its default;
 * always for a session of a test key (`caller`): a test key never acts on live data.
 */
export function showsTestData(query: URLSearchParams, caller?: KeyRecord): boolean {
  return query.get("data") === "test" || caller?.mode === "test";
}

/**
 * Refuses (403 INSUFFICIENT_SCOPE) a change of `what`, a setting live traffic uses, from a test
 * key's session (front/capabilities.ts mayChangeLive).
 */
export function liveChange(ctx: DashContext, what: string): void {
  refuse(mayChangeLive(ctx.principal.key, what));
}

/**
 * The signed-in key as a key of the mode the page shows (showsTestData), whatever its own mode (a
 * test key's session shows only the test data):
 * the routes it runs then read that mode's data (front/auth.ts dataScope), as a key of that mode would.
 */
export function dataPrincipal(ctx: DashContext): KeyPrincipal {
  const { mode: _, ...key } = ctx.principal.key;
  return { ...ctx.principal, key: showsTestData(ctx.query, ctx.principal.key) ? { ...key, mode: "test" } : key };
}

/** A secret-key route run through the pipeline as the signed-in key, reading the data of the mode the page shows (dataPrincipal). */
export function invokeForData(ctx: DashContext, route: Route<any>, call: { params?: string[]; query?: string; body?: unknown }): Promise<any> {
  return callRoute(route, dataPrincipal(ctx), { ...call, nowMs: ctx.nowMs });
}

/** The project a page is about: `project` of the query when the org owns it, else the org's first. */
export function chooseProject<P extends { id: string }>(projects: P[], wanted: string | null): P | null {
  return projects.find((p) => p.id === wanted) ?? projects[0] ?? null;
}
