import type { AppDeps } from "../deps.js";
import type { Route } from "../route.js";
import { adminDatasetsGet } from "./admin/datasets.get.js";
import { adminDatasetsActivatePost, adminDatasetsReloadPost } from "./admin/datasets-reload.post.js";
import { adminKeyDisablePost } from "./admin/key-disable.post.js";
import { adminKeyEnablePost } from "./admin/key-enable.post.js";
import { adminKeyRollPost } from "./admin/key-roll.post.js";
import { adminKeyDelete } from "./admin/key.delete.js";
import { adminKeyPatch } from "./admin/key.patch.js";
import { adminUsageGet } from "./admin/usage.get.js";
import { adminKeysPost } from "./admin/keys.post.js";
import { adminKeysGet, adminOrgsGet, adminProjectsGet } from "./admin/lists.get.js";
import { adminOrgPatch } from "./admin/org.patch.js";
import { adminOrgsPost } from "./admin/orgs.post.js";
import { adminProjectsPost } from "./admin/projects.post.js";
import { adminProjectPatch } from "./admin/project.patch.js";
import { collectPost, handshakePost, probeGet, reportPost } from "./beacon.post.js";
import { botPolicyGet, botPolicyPut } from "./bot-policy.js";
import { botPolicyReplayPost } from "./bot-policy-replay.post.js";
import { observationsGet } from "./observations.get.js";
import { trafficGet } from "./traffic.get.js";
import { challengeGet, challengeVerifyPost } from "./challenge.js";
import { emailPost } from "./email.post.js";
import { checkoutPost, portalPost, stripeWebhookPost } from "./billing.js";
import { meterPost } from "./meter.post.js";
import { sessionsResolvePost } from "./sessions-resolve.post.js";
import { authCheckPost } from "./auth-check.post.js";
import { checkPost } from "./check.post.js";
import { checkDeepPost } from "./check-deep.post.js";
import { checkHistoryGet, checkHistoryPut } from "./check-history.js";
import { checksGet } from "./checks.get.js";
import { feedbackPost } from "./feedback.post.js";
import { orgFeedbackGet } from "./org-feedback.get.js";
import { adminOrgModelResetPost, orgModelResetPost } from "./org-model-reset.post.js";
import { contentPost } from "./content.post.js";
import { adminUsageAdjustPost } from "./admin/usage-adjust.post.js";
import { announcedRoutes } from "./announced.js";
import { healthz, readyz } from "./health.get.js";
import { ipGet, ipMeGet } from "./ip.get.js";
import { ipBatchPost } from "./ip-batch.post.js";
import { metricsGet } from "./metrics.get.js";
import { openApiOptions } from "../openapi.js";
import { openapiGet } from "./openapi.get.js";
import { usageGet } from "./usage.get.js";
import { orgGet } from "./org.get.js";
import { projectsGet } from "./projects.get.js";
import { webhookDelete } from "./webhooks/webhook.delete.js";
import { webhookDeliveriesGet } from "./webhooks/webhook-deliveries.get.js";
import { webhookGet } from "./webhooks/webhook.get.js";
import { webhookPatch } from "./webhooks/webhook.patch.js";
import { webhookRollPost } from "./webhooks/webhook-roll.post.js";
import { webhooksGet } from "./webhooks/webhooks.get.js";
import { webhooksPost } from "./webhooks/webhooks.post.js";

/**
 * The routing table: every endpoint the front serves, GET /openapi.json last (its document is
 * built from the others when the table is built).
 */
export function allRoutes(deps: AppDeps): Route<any>[] {
  const routes: Route<any>[] = [
    healthz,
    readyz(deps),
    ipMeGet(deps),
    ipGet(deps),
    ipBatchPost(deps),
    usageGet(deps),
    orgGet(deps),
    projectsGet(deps),
    checkoutPost(deps),
    portalPost(deps),
    stripeWebhookPost(deps),
    handshakePost(deps),
    probeGet(deps),
    collectPost(deps),
    reportPost(deps),
    observationsGet(deps),
    trafficGet(deps),
    botPolicyGet(deps),
    botPolicyPut(deps),
    botPolicyReplayPost(deps),
    checkPost(deps),
    checkDeepPost(deps),
    feedbackPost(deps),
    checksGet(deps),
    checkHistoryGet(deps),
    checkHistoryPut(deps),
    orgFeedbackGet(deps),
    orgModelResetPost(deps),
    sessionsResolvePost(deps),
    authCheckPost(deps),
    meterPost(deps),
    contentPost(deps),
    emailPost(deps),
    challengeGet(deps, deps.challenge),
    challengeVerifyPost(deps, deps.challenge),
    adminOrgsPost(deps),
    adminOrgsGet(deps),
    adminProjectsGet(deps),
    adminKeysGet(deps),
    adminOrgPatch(deps),
    adminProjectsPost(deps),
    adminProjectPatch(deps),
    adminKeysPost(deps),
    adminKeyDisablePost(deps),
    adminKeyEnablePost(deps),
    adminKeyRollPost(deps),
    adminKeyDelete(deps),
    adminKeyPatch(deps),
    adminUsageGet(deps),
    adminUsageAdjustPost(deps),
    adminOrgModelResetPost(deps),
    adminDatasetsGet(deps),
    adminDatasetsReloadPost(deps),
    adminDatasetsActivatePost(deps),
    // Outbound webhooks: the same routes for the org's secret key and for the admin token.
    ...(["org", "admin"] as const).flatMap((access) => [
      webhooksPost(deps, access),
      webhooksGet(deps, access),
      webhookGet(deps, access),
      webhookPatch(deps, access),
      webhookDelete(deps, access),
      webhookRollPost(deps, access),
      webhookDeliveriesGet(deps, access),
    ]),
    metricsGet(deps),
    ...announcedRoutes(),
  ];
  routes.push(openapiGet(routes, openApiOptions(deps.config)));
  return routes;
}
