import type { CheckHistoryRecord, ObservationRecord } from "../../store/records.js";

/**
 * Traffic figures of a project over a time range (GET /v1/projects/{projectId}/traffic): hits
 * per time bucket and decision, and the top kinds, reasons, bots, networks (ASN) and countries
 * with their share and how many were blocked; the org's checks per bucket and decision. Pure:
 * the route scans the stored records and feeds them here one at a time.
 */

export type Decision = "allow" | "review" | "block";
export type Bucket = "hour" | "day";

/** Rows kept per top table (the largest); `totals` counts every hit of the range. */
export const TOP_ROWS = 20;

const BUCKET_MS: Record<Bucket, number> = { hour: 3_600_000, day: 86_400_000 };

/** Hits of one time bucket per decision. */
export interface SeriesPoint {
  start: string;
  allow: number;
  review: number;
  block: number;
}

/** One row of a top table: hits, their share of all hits in the range, and how many were blocked. */
export interface TopRow {
  hits: number;
  share: number;
  blocked: number;
}

/** The network of an address, as the IP dataset names it; null when no source covers it. */
export interface Network {
  asn: number | null;
  org: string | null;
}

interface Count {
  hits: number;
  blocked: number;
}

/** The figures the route answers with (its `data`, without the range it echoes). */
export interface TrafficFigures {
  totals: { hits: number; allow: number; review: number; block: number };
  series: SeriesPoint[];
  kinds: Array<TopRow & { kind: string }>;
  reasons: Array<TopRow & { reason: string }>;
  bots: Array<TopRow & { bot_id: string; bot_name: string | null; bot_kind: string | null }>;
  asns: Array<TopRow & { asn: number | null; org: string | null }>;
  countries: Array<TopRow & { country: string | null }>;
  checks: { totals: { checks: number; allow: number; review: number; block: number }; series: SeriesPoint[] };
}

/** The start (epoch ms, UTC) of the bucket holding `ms`. */
export function bucketStart(ms: number, bucket: Bucket): number {
  return ms - (((ms % BUCKET_MS[bucket]) + BUCKET_MS[bucket]) % BUCKET_MS[bucket]);
}

/**
 * The kind of a hit, from the observation's own classification (`ua.bot_kind`): a registry bot
 * kind, "automation", "client", or "human" for a browser that is none of these.
 */
export function kindOf(o: Pick<ObservationRecord, "ua">): string {
  return o.ua.bot_kind ?? "human";
}

/**
 * Counts hits and checks of the range [fromMs, toMs) into buckets of `bucket`. Records outside
 * the range are ignored (the caller may hand whole stored pages).
 */
export class TrafficTally {
  private readonly first: number;
  private readonly step: number;
  private readonly hitSeries: Array<Record<Decision, number>>;
  private readonly checkSeries: Array<Record<Decision, number>>;
  private readonly kinds = new Map<string, Count>();
  private readonly reasons = new Map<string, Count>();
  private readonly bots = new Map<string, Count & { name: string | null; kind: string | null }>();
  private readonly networks = new Map<string, Count & Network>();
  private readonly countries = new Map<string, Count>();

  constructor(
    readonly fromMs: number,
    readonly toMs: number,
    bucket: Bucket,
  ) {
    this.step = BUCKET_MS[bucket];
    this.first = bucketStart(fromMs, bucket);
    const n = Math.max(1, Math.ceil((toMs - this.first) / this.step));
    const zero = (): Record<Decision, number> => ({ allow: 0, review: 0, block: 0 });
    this.hitSeries = Array.from({ length: n }, zero);
    this.checkSeries = Array.from({ length: n }, zero);
  }

  /** Whether `ts` is in the range. */
  covers(ts: number): boolean {
    return ts >= this.fromMs && ts < this.toMs;
  }

  /** Counts one hit; `network` is its address's network (null without an address). */
  addHit(o: ObservationRecord, network: Network | null): void {
    if (!this.covers(o.ts)) return;
    const blocked = o.decision === "block";
    this.hitSeries[this.index(o.ts)]![o.decision]++;
    bump(this.kinds, kindOf(o), blocked);
    for (const r of o.reasons) bump(this.reasons, r, blocked);
    if (o.bot_id !== null) {
      const b = bump(this.bots, o.bot_id, blocked, () => ({ name: o.ua.bot_name, kind: o.ua.bot_kind }));
      b.name ??= o.ua.bot_name;
    }
    if (network) bump(this.networks, String(network.asn), blocked, () => ({ asn: network.asn, org: network.org }));
    bump(this.countries, o.country ?? "", blocked);
  }

  /** Counts one check of the org's history. */
  addCheck(c: Pick<CheckHistoryRecord, "ts" | "decision">): void {
    if (this.covers(c.ts)) this.checkSeries[this.index(c.ts)]![c.decision]++;
  }

  /** The figures: every bucket of the range, and each top table's TOP_ROWS largest rows (ties by name). */
  figures(): TrafficFigures {
    const series = (s: Array<Record<Decision, number>>): SeriesPoint[] =>
      s.map((d, i) => ({ start: new Date(this.first + i * this.step).toISOString(), ...d }));
    const hits = sumSeries(this.hitSeries);
    const checks = sumSeries(this.checkSeries);
    const total = hits.allow + hits.review + hits.block;
    const row = (c: Count): TopRow => ({ hits: c.hits, share: total === 0 ? 0 : Math.round((c.hits / total) * 10_000) / 10_000, blocked: c.blocked });
    return {
      totals: { hits: total, ...hits },
      series: series(this.hitSeries),
      kinds: top(this.kinds).map(([kind, c]) => ({ kind, ...row(c) })),
      reasons: top(this.reasons).map(([reason, c]) => ({ reason, ...row(c) })),
      bots: top(this.bots).map(([bot_id, c]) => ({ bot_id, bot_name: c.name, bot_kind: c.kind, ...row(c) })),
      asns: top(this.networks).map(([, c]) => ({ asn: c.asn, org: c.org, ...row(c) })),
      countries: top(this.countries).map(([country, c]) => ({ country: country === "" ? null : country, ...row(c) })),
      checks: { totals: { checks: checks.allow + checks.review + checks.block, ...checks }, series: series(this.checkSeries) },
    };
  }

  private index(ts: number): number {
    return Math.min(this.hitSeries.length - 1, Math.floor((ts - this.first) / this.step));
  }
}

function bump<C extends Count>(map: Map<string, C>, key: string, blocked: boolean, init?: () => Omit<C, keyof Count>): C {
  let c = map.get(key);
  if (!c) {
    c = { hits: 0, blocked: 0, ...init?.() } as C;
    map.set(key, c);
  }
  c.hits++;
  if (blocked) c.blocked++;
  return c;
}

function top<C extends Count>(map: Map<string, C>): Array<[string, C]> {
  return [...map].sort((a, b) => b[1].hits - a[1].hits || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, TOP_ROWS);
}

function sumSeries(s: Array<Record<Decision, number>>): Record<Decision, number> {
  const out = { allow: 0, review: 0, block: 0 };
  for (const d of s) {
    out.allow += d.allow;
    out.review += d.review;
    out.block += d.block;
  }
  return out;
}
