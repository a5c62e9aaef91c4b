import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../../shared/errors.js";
import { defineRoute } from "../../route.js";
import { activateDatasetBody, datasetSwitchResponse } from "../../schemas/admin.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "ipDatasets" | "peers">;

/**
 * POST /v1/admin/datasets/reload: serve the build `current` names (after `npm run data:build`).
 * Requests in flight finish on the build they started with; nothing restarts.
 */
export function adminDatasetsReloadPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/datasets/reload",
    auth: { kind: "admin" },
    docs: {
      summary: "Reload the IP dataset",
      description: "Serves the build that `current` names (after `npm run data:build`). Requests in flight finish on the build they started with; nothing restarts. A build that cannot be opened answers 409 DATASET_SWITCH_FAILED and the previous one stays in service.",
      tag: "admin",
      response: datasetSwitchResponse,
      errors: ["DATASET_SWITCH_FAILED"],
      example: { response: { loaded: "ip-20261121T040000Z-5e6f7a8b", previous: "ip-20261120T221500Z-1a2b3c4d", changed: true } },
    },
    handle() {
      return {
        data: switchOrExplain(() => {
          const r = deps.ipDatasets.reload();
          deps.peers.datasets(); // every other front thread loads it too
          return r;
        }),
      };
    },
  });
}

/** POST /v1/admin/datasets/activate {version}: roll forward or back to a build still on disk. */
export function adminDatasetsActivatePost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/datasets/activate",
    auth: { kind: "admin" },
    body: activateDatasetBody,
    docs: {
      summary: "Activate an IP dataset build",
      description: "Rolls forward or back to a build still on disk (GET /v1/admin/datasets lists them) and makes it `current`. An unknown version answers 404; a build that cannot be opened 409 DATASET_SWITCH_FAILED, and the previous one stays in service.",
      tag: "admin",
      response: datasetSwitchResponse,
      errors: ["NOT_FOUND", "DATASET_SWITCH_FAILED"],
      example: {
        body: { version: "ip-20261120T221500Z-1a2b3c4d" },
        response: { loaded: "ip-20261120T221500Z-1a2b3c4d", previous: "ip-20261121T040000Z-5e6f7a8b", changed: true },
      },
    },
    handle({ body }) {
      if (!deps.ipDatasets.builds().some((b) => b.version === body.version)) {
        throw new ApiError("NOT_FOUND", `No dataset build ${body.version} on disk; GET /v1/admin/datasets lists them.`);
      }
      return { data: switchOrExplain(() => deps.ipDatasets.activate(body.version)) };
    },
  });
}

/** A build that cannot be opened leaves the old one in service; say why (an operator asked). */
function switchOrExplain<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new ApiError("DATASET_SWITCH_FAILED", `Dataset switch refused, still serving the previous build: ${(err as Error).message}`);
  }
}
