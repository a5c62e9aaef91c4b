import { ApiError } from "../../shared/errors.js";
import { TOP_ROWS, type Bucket } from "../../front/traffic/tally.js";
import type { AppDeps } from "../deps.js";
import { defineRoute, type InputsOf } from "../route.js";
import { projectIdParam } from "../schemas/params.js";
import { trafficQuery, trafficResponse } from "../schemas/traffic.js";
import { ackOrThrow } from "./ack.js";
import { ownedProject } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "config" | "flushLedger" | "flushObservations" | "ipDatasets" | "scans" | "store">;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Longest range per bucket width: 31 days of hours (744 buckets), 400 days of days. */
const MAX_RANGE: Record<Bucket, number> = { hour: 31 * DAY, day: 400 * DAY };

/**
 * GET /v1/projects/{projectId}/traffic?from=&to=&bucket=: a project's hits over a time range by
 * decision, its top kinds, reasons, bots, networks and countries, and the org's checks by
 * decision (secret key of the owning org; free). Computed by reading the stored observations and
 * checks of the range on the scan thread (front/traffic/scan-thread.ts), at most
 * FS_TRAFFIC_SCAN_LIMIT of each (else `partial`); one report or replay at a time per org.
 */
export function trafficGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects/:projectId/traffic",
    auth: { kind: "secret" },
    params: { projectId: projectIdParam },
    query: trafficQuery,
    docs: {
      summary: "A project's traffic over time",
      description: `Hits of a project of the key's org in the range [\`from\`, \`to\`) per time bucket (UTC hours or days) and decision; the top ${TOP_ROWS} kinds, reasons, bots, networks (ASN, named by the IP dataset in service) and countries with their share of the hits and how many were blocked; and the org's checks per bucket and decision (checks carry no project). Computed from the stored observations (kept FS_OBSERVATION_RETENTION_DAYS) and check history, newest first, at most FS_TRAFFIC_SCAN_LIMIT of each: past it \`partial\` is true and the figures cover the newest part of the range. A range longer than 31 days of hours or 400 days of days, or \`from\` not before \`to\`, answers 400 VALIDATION_ERROR. Reads after every hit and check answered so far is stored. One traffic report or policy replay runs at a time per org (per front thread): another one meanwhile answers 429 RATE_LIMITED with Retry-After (1 s), before anything is read.`,
      tag: "projects",
      response: trafficResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "RATE_LIMITED", "NOT_READY"],
      example: {
        params: { projectId: "prj_8Hq2LmT7aZ3kXw9B" },
        query: { from: "2026-11-20", to: "2026-11-21", bucket: "day" },
        response: {
          project_id: "prj_8Hq2LmT7aZ3kXw9B",
          from: "2026-11-20T00:00:00.000Z",
          to: "2026-11-21T00:00:00.000Z",
          bucket: "day",
          partial: false,
          scanned: 3,
          totals: { hits: 3, allow: 2, review: 0, block: 1 },
          series: [{ start: "2026-11-20T00:00:00.000Z", allow: 2, review: 0, block: 1 }],
          kinds: [
            { kind: "human", hits: 2, share: 0.6667, blocked: 0 },
            { kind: "ai_crawler", hits: 1, share: 0.3333, blocked: 1 },
          ],
          reasons: [{ reason: "bot:id:gptbot", hits: 1, share: 0.3333, blocked: 1 }],
          bots: [{ bot_id: "gptbot", bot_name: "GPTBot", bot_kind: "ai_crawler", hits: 1, share: 0.3333, blocked: 1 }],
          asns: [
            { asn: 7922, org: "Comcast Cable Communications, LLC", hits: 2, share: 0.6667, blocked: 0 },
            { asn: 8075, org: "Microsoft Corporation", hits: 1, share: 0.3333, blocked: 1 },
          ],
          countries: [{ country: "US", hits: 3, share: 1, blocked: 1 }],
          checks: {
            scope: "org",
            partial: false,
            totals: { checks: 1, allow: 1, review: 0, block: 0 },
            series: [{ start: "2026-11-20T00:00:00.000Z", allow: 1, review: 0, block: 0 }],
          },
        },
      },
    },
    async handle({ principal, params, query, nowMs }) {
      // One report or replay at a time per org, refused before anything is read.
      const done = deps.scans.enter(principal!.orgId);
      try {
        const project = await ownedProject(deps.beacon.projects, principal!, params.projectId);
        const range = trafficRange(query, nowMs);
        // Everything answered so far reaches the store first (messages to the writer keep their order).
        deps.flushObservations();
        deps.flushLedger();
        ackOrThrow(await deps.store.send({ op: "ping" }));
        const limit = deps.config.FS_TRAFFIC_SCAN_LIMIT;
        const r = await deps.scans.run({ kind: "traffic", projectId: project.id, orgId: project.org_id, ...range, limit, ipDatasetDir: deps.ipDatasets.dir });
        const f = r.figures;
        return {
          data: {
            project_id: project.id,
            from: new Date(range.from).toISOString(),
            to: new Date(range.to).toISOString(),
            bucket: range.bucket,
            partial: r.hits.partial,
            scanned: r.hits.scanned,
            totals: f.totals,
            series: f.series,
            kinds: f.kinds,
            reasons: f.reasons,
            bots: f.bots,
            asns: f.asns,
            countries: f.countries,
            checks: { scope: "org" as const, partial: r.checks.partial, ...f.checks },
          },
          credits: 0,
        };
      } finally {
        done();
      }
    },
  });
}

/**
 * The range of a query: `to` defaults to now, `from` to 24 hours before it, the bucket to hours
 * up to 48 hours and days beyond.
 * @throws ApiError VALIDATION_ERROR when `from` is not before `to` or the range is too long for its bucket
 */
export function trafficRange(q: InputsOf<typeof trafficQuery>, nowMs: number): { from: number; to: number; bucket: Bucket } {
  const to = q.to ?? nowMs;
  const from = q.from ?? to - DAY;
  if (!(from < to)) throw new ApiError("VALIDATION_ERROR", "query.from: must be before `to`.");
  const bucket = q.bucket ?? (to - from <= 2 * DAY ? "hour" : "day");
  if (to - from > MAX_RANGE[bucket])
    throw new ApiError("VALIDATION_ERROR", `query.to: a range of ${bucket}s may span at most ${MAX_RANGE[bucket] / DAY} days.`);
  return { from, to, bucket };
}
