import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";

/** GET /v1/admin/datasets: the build in service, the one `current` names, and every build on disk. */
export function adminDatasetsGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/datasets",
    auth: { kind: "admin" },
    handle() {
      const meta = deps.ipDatasets.get().meta;
      return {
        data: {
          ip: {
            loaded: deps.ipDatasets.version,
            source: meta.source,
            built_at: meta.built_at,
            sources: meta.sources,
            builds: deps.ipDatasets.builds(),
          },
        },
      };
    },
  });
}
