import { z } from "zod";

/** A time of the range: an ISO 8601 date (UTC midnight) or date and time with a zone. */
const instant = (what: string) =>
  z
    .string()
    .max(40)
    .regex(
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/,
      "an ISO 8601 date (2026-11-20) or date and time with a zone (2026-11-20T08:00:00Z)",
    )
    .transform((text, ctx) => {
      const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
      if (Number.isFinite(ms)) return ms;
      ctx.addIssue({ code: "custom", message: "not a date" });
      return z.NEVER;
    })
    .optional()
    .describe(what);

/** Query parameters of GET /v1/projects/{projectId}/traffic. */
export const trafficQuery = {
  from: instant("Start of the range (inclusive); default 24 hours before `to`."),
  to: instant("End of the range (exclusive); default now."),
  bucket: z.enum(["hour", "day"]).optional().describe("Width of the series' buckets (UTC); default `hour` for ranges up to 48 hours, else `day`."),
};

const point = z.object({
  start: z.string().describe("Start of the bucket (ISO 8601, UTC)."),
  allow: z.number().int(),
  review: z.number().int(),
  block: z.number().int(),
});
const row = {
  hits: z.number().int().describe("Hits of the range with this value."),
  share: z.number().min(0).max(1).describe("`hits` over all hits of the range (4 decimals)."),
  blocked: z.number().int().describe("Of them, decided `block`."),
};

/** `data` of GET /v1/projects/{projectId}/traffic. */
export const trafficResponse = z.object({
  project_id: z.string(),
  from: z.string().describe("Start of the range (ISO 8601)."),
  to: z.string().describe("End of the range (ISO 8601, exclusive)."),
  bucket: z.enum(["hour", "day"]),
  partial: z
    .boolean()
    .describe(
      "True when the scan stopped at its limit (FS_TRAFFIC_SCAN_LIMIT observations or checks): the figures then cover only the newest part of the range.",
    ),
  scanned: z.number().int().describe("Observations read to answer."),
  totals: z.object({ hits: z.number().int(), allow: z.number().int(), review: z.number().int(), block: z.number().int() }),
  series: z.array(point).describe("Hits per bucket and decision, every bucket of the range, oldest first."),
  kinds: z
    .array(z.object({ kind: z.string().describe("`ua.bot_kind` of the hit (a bot kind, `automation`, `client`), or `human`."), ...row }))
    .describe("Largest first, at most 20."),
  reasons: z.array(z.object({ reason: z.string(), ...row })).describe("Largest first, at most 20; a hit counts once for each of its reasons."),
  bots: z
    .array(z.object({ bot_id: z.string(), bot_name: z.string().nullable(), bot_kind: z.string().nullable(), ...row }))
    .describe("Hits of registry bots by `bot_id`, largest first, at most 20."),
  asns: z
    .array(z.object({ asn: z.number().int().nullable().describe("Null: the address is in no announced range."), org: z.string().nullable(), ...row }))
    .describe("Hits by the network of their address (the IP dataset in service now), largest first, at most 20."),
  countries: z.array(z.object({ country: z.string().nullable().describe("ISO code; null when unknown."), ...row })).describe("Largest first, at most 20."),
  checks: z
    .object({
      scope: z.literal("org").describe("Checks carry no project: these are the org's."),
      partial: z.boolean(),
      totals: z.object({ checks: z.number().int(), allow: z.number().int(), review: z.number().int(), block: z.number().int() }),
      series: z.array(point),
    })
    .describe("The org's checks (POST /v1/check and /v1/check/deep that its check history keeps) per bucket and decision."),
});
