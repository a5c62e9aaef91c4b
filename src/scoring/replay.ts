/**
 * Replay of stored decisions under a proposed policy or proposed thresholds: the tally of what
 * would have changed. Pure: no I/O, no clocks. The caller re-decides each stored item with the
 * live path's own functions (decideWithPolicy, check.ts decide) and hands the tally the old and
 * the new decision; this module only counts and keeps examples.
 */

/** One group of changes (one kind, one reason, one form): how many, and the first examples. */
export interface ReplayGroup<E> {
  key: string;
  count: number;
  examples: E[];
}

/** What a replay found. */
export interface ReplaySummary<E> {
  /** Stored items re-decided. */
  scanned: number;
  /** Of them, those whose decision would change. */
  changed: number;
  /** Changes by old and new decision, most frequent first. */
  transitions: Array<{ from: string; to: string; count: number }>;
  /** Changes by each dimension (e.g. "kind", "reason"): groups most frequent first, each with up to the example limit. */
  groups: Record<string, Array<ReplayGroup<E>>>;
}

/**
 * Counts the changes of a replay by transition and by the caller's dimensions.
 *
 * @example
 * const t = new ReplayTally<string>(["kind"], 3);
 * t.scan("allow", "block", () => ({ kind: "ai_crawler" }), () => "obs_1");
 * t.summary().transitions // [{ from: "allow", to: "block", count: 1 }]
 */
export class ReplayTally<E> {
  private scanned = 0;
  private changed = 0;
  private readonly transitions = new Map<string, { from: string; to: string; count: number }>();
  private readonly groups = new Map<string, Map<string, ReplayGroup<E>>>();

  /**
   * @param dimensions the names of the groupings every changed item gives a key for
   * @param examplesPerGroup most examples kept for each group (the first ones scanned)
   */
  constructor(
    private readonly dimensions: readonly string[],
    private readonly examplesPerGroup: number,
  ) {
    if (!Number.isInteger(examplesPerGroup) || examplesPerGroup < 0) throw new RangeError(`examplesPerGroup must be a non-negative integer, got ${examplesPerGroup}`);
    for (const d of dimensions) this.groups.set(d, new Map());
  }

  /**
   * Counts one re-decided item; `keys` and `example` are called only when the decision changes.
   * @param keys the item's key in each dimension
   * @param example makes the item's example (called once at most)
   */
  scan(from: string, to: string, keys: () => Readonly<Record<string, string>>, example: () => E): void {
    this.scanned++;
    if (from === to) return;
    this.changed++;
    const t = `${from}>${to}`;
    const tr = this.transitions.get(t);
    if (tr) tr.count++;
    else this.transitions.set(t, { from, to, count: 1 });
    let made: E | undefined;
    const k = keys();
    for (const d of this.dimensions) {
      const byKey = this.groups.get(d)!;
      const key = k[d] ?? "";
      let g = byKey.get(key);
      if (!g) byKey.set(key, (g = { key, count: 0, examples: [] }));
      g.count++;
      if (g.examples.length < this.examplesPerGroup) {
        made ??= example();
        g.examples.push(made);
      }
    }
  }

  /** Items scanned so far. */
  get count(): number {
    return this.scanned;
  }

  summary(): ReplaySummary<E> {
    const byCount = <T extends { count: number }>(a: T, b: T): number => b.count - a.count;
    const groups: Record<string, Array<ReplayGroup<E>>> = {};
    for (const [d, byKey] of this.groups) groups[d] = [...byKey.values()].sort((a, b) => byCount(a, b) || a.key.localeCompare(b.key));
    return { scanned: this.scanned, changed: this.changed, transitions: [...this.transitions.values()].sort(byCount), groups };
  }
}
