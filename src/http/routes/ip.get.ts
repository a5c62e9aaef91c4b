import { ipRecordJson } from "../../scoring/ip-record.js";
import { parseIp } from "../../shared/ip.js";
import { ApiError } from "../errors.js";
import type { AppDeps } from "../deps.js";
import { queryParam } from "../request.js";
import { RawJson } from "../respond.js";
import { defineRoute } from "../route.js";
import { parseInclude, type IpDatasetName } from "../schemas/ip.js";
import type { IpDatasetMeta } from "../../datasets/ip-dataset.js";

/** SPEC 8: base lookup 1 credit. */
const BASE_CREDITS = 1;

/**
 * GET /v1/ip/{ip}: ASN, org and country from the base dataset.
 * Runs inline on the front thread: the lookup is a typed-array binary search (~0.1 µs), far
 * below the ~18 µs of a pool round trip (bench/micro/pool-hop.bench.ts).
 * Enrichment datasets (region, company, rdns) are accepted and reported as skipped until their
 * sources are built; they cost nothing while skipped.
 */
export function ipGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/ip/:ip",
    auth: { kind: "secret" },
    minCredits: BASE_CREDITS,
    handle(ctx) {
      const raw = decodeParam(ctx.snap.params[0] ?? "");
      const include = parseInclude(queryParam(ctx.snap.query, "include"));
      const parsed = raw === null ? null : parseIp(raw);
      if (raw === null || parsed === null) {
        throw new ApiError("VALIDATION_ERROR", `path.ip: '${(raw ?? ctx.snap.params[0] ?? "").slice(0, 64)}' is not a valid IPv4 or IPv6 address.`);
      }
      const dataset = deps.ipDatasets.get();
      const ipVersion = parsed.version === 4 && !parsed.mapped ? 4 : 6;
      return {
        data: new RawJson(ipRecordJson(raw, ipVersion, dataset.lookup(parsed))),
        credits: BASE_CREDITS,
        metadataJson: metadataJsonFor(dataset.meta, include),
      };
    },
  });
}

/** Serialised provenance and enrichment metadata, the same for every call with one dataset and include list. */
const metadataCache = new Map<string, string>();
function metadataJsonFor(meta: IpDatasetMeta, include: IpDatasetName[]): string {
  const k = `${meta.version}|${include.join(",")}`;
  let json = metadataCache.get(k);
  if (json === undefined) {
    const fields = {
      source: meta.source,
      built_at: meta.built_at,
      enrichment: { requested: include, resolved: [], skipped: include, credits: BASE_CREDITS },
    };
    json = JSON.stringify(fields).slice(1, -1);
    if (metadataCache.size > 256) metadataCache.clear();
    metadataCache.set(k, json);
  }
  return json;
}

/** Percent-decodes a path segment (IPv6 zone ids and colons may arrive encoded); null if malformed. */
function decodeParam(s: string): string | null {
  if (s.indexOf("%") < 0) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}
