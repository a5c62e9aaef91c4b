import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { datasetsResponse } from "../../schemas/admin.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "ipDatasets">;

/** GET /v1/admin/datasets: the build in service, the one `current` names, and every build on disk. */
export function adminDatasetsGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/datasets",
    auth: { kind: "admin" },
    docs: {
      summary: "IP dataset builds",
      description: "The IP dataset build in service with its sources (status, rows, checksums, dates, licences), and every build on disk, newest first.",
      tag: "admin",
      response: datasetsResponse,
      errors: [],
      example: {
        response: {
          ip: {
            loaded: "ip-20261120T221500Z-1a2b3c4d",
            source: "ip-location-db:asn+geo-whois-asn-country@2.3.2026061719 + 271/284 listed sources",
            built_at: "2026-11-20T22:15:00.000Z",
            sources: [
              {
                id: "tor-exits",
                kind: "tor",
                status: "ok",
                reason: null,
                rows: 1432,
                bad_rows: 0,
                sha256: "9b2f0c4e7a1d3b5c8e6f2a4d7c9b1e3f5a8c0d2e4b6f8a1c3e5d7b9f2a4c6e8d",
                data_date: "2026-11-20T21:00:00Z",
                taken: "2026-11-20",
                upstream: "https://onionoo.torproject.org/details?type=relay&running=true&flag=Exit",
                licence: "CC0-1.0",
                note: null,
              },
            ],
            builds: [
              { version: "ip-20261120T221500Z-1a2b3c4d", built_at: "2026-11-20T22:15:00.000Z", source: "ip-location-db:asn+geo-whois-asn-country@2.3.2026061719 + 271/284 listed sources" },
            ],
          },
        },
      },
    },
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
