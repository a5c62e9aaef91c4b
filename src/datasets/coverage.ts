/**
 * What a build of the IP dataset covers, as every IP answer states it in `metadata.coverage`
 * (docs/api.md, "Coverage"): per source family, the date of its oldest usable source, and which
 * families lack some or all of their listed sources. An answer from a partial build (no snapshot,
 * a failed download, a withheld source) is recognisable as one.
 */
import type { IpDatasetMeta } from "./ip-dataset.js";

/** `metadata.coverage` of an IP answer. */
export interface IpCoverage {
  /** Listed sources (range and ASN lists, bot registries, the npm ASN and country data) in the build. */
  usable: number;
  /** Listed sources of the build's manifest. */
  listed: number;
  /**
   * Per family with at least one usable source (a source kind such as `cloud`, `tor`, `asn`, or
   * `bots` for the User-Agent registries): the date (YYYY-MM-DD) its oldest dated usable source
   * was taken from upstream, or null when none of them is dated (sources read from a --sources
   * directory carry no date).
   */
  families: Record<string, string | null>;
  /** Families with some of their listed sources missing or failed. */
  partial: string[];
  /** Families with none of their listed sources usable. */
  absent: string[];
}

/** Families not reported: the curated list in the repository is always there. */
const NOT_A_FAMILY = new Set(["mobile-asn"]);

/** Computes the coverage of a build from its meta (once per build: callers cache it). */
export function coverageOf(meta: IpDatasetMeta): IpCoverage {
  const tally = new Map<string, { usable: number; listed: number; oldest: string | null }>();
  const add = (family: string, ok: boolean, taken: string | null | undefined) => {
    if (NOT_A_FAMILY.has(family)) return;
    const t = tally.get(family) ?? { usable: 0, listed: 0, oldest: null };
    t.listed++;
    if (ok) {
      t.usable++;
      const day = taken ? taken.slice(0, 10) : null;
      if (day !== null && (t.oldest === null || day < t.oldest)) t.oldest = day;
    }
    tally.set(family, t);
  };
  for (const s of meta.sources) add(s.kind, s.status === "ok", s.taken ?? s.data_date);
  for (const r of meta.registries ?? []) add("bots", r.status === "ok", r.taken);
  const families: Record<string, string | null> = {};
  const partial: string[] = [];
  const absent: string[] = [];
  let usable = 0;
  let listed = 0;
  for (const [family, t] of [...tally].sort(([a], [b]) => (a < b ? -1 : 1))) {
    usable += t.usable;
    listed += t.listed;
    if (t.usable === 0) absent.push(family);
    else families[family] = t.oldest;
    if (t.usable > 0 && t.usable < t.listed) partial.push(family);
  }
  return { usable, listed, families, partial, absent };
}
