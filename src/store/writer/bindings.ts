import type { KvDatabase as Database } from "../state-env.js";
import type { BindingKind, MeterOutcome, MeterRequest, ResolveCounts, ResolveRequest } from "../records.js";

/**
 * Session resolution and metering state, kept by the writer thread (the only writer, so every
 * read-check-write below is exact under any concurrency: requests are applied one at a time).
 *
 * Identifiers arrive hashed (keyed SHA-256, see src/shared/pseudonym.ts); nothing raw is stored.
 *
 * - `bindings` [org, kind, value, user] -> last seen (epoch ms): one entry per distinct account
 *   seen with a session, fingerprint, IP, IP prefix or email; for kind "session_email", one per
 *   email seen on a session.
 * - `bindingKeys` [org, kind, value] -> { count, rep }: how many distinct accounts (or emails) the
 *   value has, and one of them (the representative used to link accounts). A resolve reads and
 *   updates a handful of these keys: O(1) in the number of bindings (B-tree lookups).
 * - `clusters` [org, user] -> { parent, size }: union-find over accounts linked by a shared
 *   session, fingerprint or (not shared-network) IP, so a meter budget follows the person, not
 *   the account. Union by size, path halving.
 * - `meters` [org, budget key, resource] -> sliding-window log (Float64Array of [ts, cost] pairs).
 *   When two clusters merge, the smaller root's logs move into the bigger root's, so a budget
 *   already used is not lost by linking (or rotating) accounts.
 */
export interface BindingDbs {
  bindings: Database<number, [string, string, string, string]>;
  bindingKeys: Database<{ count: number; rep: string }, [string, string, string]>;
  clusters: Database<{ parent: string; size: number }, [string, string]>;
  meters: Database<Buffer, [string, string, string]>;
}

/** Merges two [ts, cost] logs, each sorted by time, into one sorted log. */
function mergeLogs(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length || (i < a.length && a[i]! <= b[j]!);
    const src = takeA ? a : b;
    const at = takeA ? i : j;
    out[k++] = src[at]!;
    out[k++] = src[at + 1]!;
    if (takeA) i += 2;
    else j += 2;
  }
  return out;
}

function asLog(buf: Buffer | undefined): Float64Array {
  return buf ? new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)) : new Float64Array(0);
}

/** The longest meter window (schemas/sessions.ts MAX_WINDOW_MS): older logs are dropped. */
const MAX_WINDOW_MS = 31 * 86_400_000;

/** Accounts an identifier may have and still link them (docs/api.md, "POST /v1/sessions/resolve"). */
export const LINK_MAX_ACCOUNTS = 10;

/** A binding's last-seen time is rewritten at most this often. */
const REFRESH_MS = 86_400_000;

/** Retention of bindings; older ones are pruned and stop counting. */
export const DEFAULT_RETENTION_MS = 90 * 86_400_000;

/**
 * A write-through cache over one database of the writer: the writer is the only thread that
 * writes, so what it last read or wrote is what the database holds, and a resolve's ~20 lookups
 * of hot identifiers (a returning user, a busy session) come from memory instead of LMDB (each
 * get costs ~2 µs of key encoding, lookup and decoding). Bounded: cleared when full; cleared
 * too after a failed transaction (reset).
 */
class WriteThrough<V, K extends Array<string | number>> {
  /**
   * Nested maps, one level per key part: the parts (org id, hashed identifiers) are strings
   * that already carry their hash, so a lookup hashes nothing new; joining them into one string
   * key per lookup made `get` ~40% of the writer's time in a resolve (CPU profile under wrk).
   */
  private root = new Map<string | number, any>();
  private size = 0;

  constructor(
    private readonly db: Database<V, K>,
    private readonly max = 200_000,
  ) {}

  get(key: K): V | undefined {
    let m: Map<string | number, any> | undefined = this.root;
    const last = key.length - 1;
    for (let i = 0; i < last && m !== undefined; i++) m = m.get(key[i]!);
    const hit = m?.get(key[last]!);
    if (hit !== undefined) return hit ?? undefined;
    const v = this.db.get(key);
    this.remember(key, v ?? null);
    return v;
  }

  /**
   * Reads the keys not held yet in one round trip where the database offers it (readMany, on
   * PostgreSQL), so the lookups that follow come from memory. A no-op on LMDB.
   */
  prime(keys: K[]): void {
    if (!this.db.readMany) return;
    const missing = keys.filter((k) => !this.holds(k));
    if (missing.length === 0) return;
    const values = this.db.readMany(missing);
    missing.forEach((k, i) => this.remember(k, values[i] ?? null));
  }

  private holds(key: K): boolean {
    let m: Map<string | number, any> | undefined = this.root;
    const last = key.length - 1;
    for (let i = 0; i < last && m !== undefined; i++) m = m.get(key[i]!);
    return m?.has(key[last]!) ?? false;
  }

  put(key: K, value: V): void {
    this.db.putSync(key, value);
    this.remember(key, value);
  }

  remove(key: K): void {
    this.db.removeSync(key);
    this.remember(key, null);
  }

  clear(): void {
    this.root = new Map();
    this.size = 0;
  }

  private remember(key: K, v: V | null): void {
    if (this.size >= this.max) this.clear();
    let m = this.root;
    const last = key.length - 1;
    for (let i = 0; i < last; i++) {
      let next = m.get(key[i]!);
      if (next === undefined) {
        next = new Map();
        m.set(key[i]!, next);
      }
      m = next;
    }
    if (!m.has(key[last]!)) this.size++;
    m.set(key[last]!, v);
  }
}

export class BindingIndex {
  /** How often a binding's last-seen time is rewritten: daily, or more often for short retentions. */
  private readonly refreshMs: number;

  private readonly entries: WriteThrough<number, [string, string, string, string]>;
  private readonly keys: WriteThrough<{ count: number; rep: string }, [string, string, string]>;
  private readonly nodes: WriteThrough<{ parent: string; size: number }, [string, string]>;
  /** Decoded meter logs, write-through like the others (logs are never mutated, only replaced). */
  private readonly logs = new Map<string, Float64Array>();

  constructor(
    private readonly dbs: BindingDbs,
    private readonly retentionMs = DEFAULT_RETENTION_MS,
  ) {
    this.refreshMs = Math.min(REFRESH_MS, retentionMs / 10);
    this.entries = new WriteThrough(dbs.bindings);
    this.keys = new WriteThrough(dbs.bindingKeys);
    this.nodes = new WriteThrough(dbs.clusters);
  }

  /** Forgets cached state (after a failed transaction the disk is the truth again). */
  reset(): void {
    this.entries.clear();
    this.keys.clear();
    this.nodes.clear();
    this.logs.clear();
  }

  private getLog(key: [string, string, string]): Float64Array {
    const s = key.join("\u0000");
    let log = this.logs.get(s);
    if (!log) {
      log = asLog(this.dbs.meters.get(key));
      this.rememberLog(s, log);
    }
    return log;
  }

  private putLog(key: [string, string, string], log: Float64Array): void {
    this.dbs.meters.putSync(key, Buffer.from(log.buffer, log.byteOffset, log.byteLength));
    this.rememberLog(key.join("\u0000"), log);
  }

  private removeLog(key: [string, string, string]): void {
    this.dbs.meters.removeSync(key);
    this.logs.delete(key.join("\u0000"));
  }

  private rememberLog(s: string, log: Float64Array): void {
    if (this.logs.size >= 100_000) this.logs.clear();
    this.logs.set(s, log);
  }

  /**
   * Reads ahead, in a few round trips, the records a batch of resolves and meter decisions will
   * look up first: each account's cluster node, each identifier's key and binding, then the
   * nodes of the accounts those keys name. On PostgreSQL the caches start empty for every batch
   * (another node may have written), and reading key by key cost a round trip per lookup, about
   * twenty per resolve. Must run in the batch's transaction, before its intents.
   */
  prefetch(resolves: ResolveRequest[], meters: MeterRequest[]): void {
    const nodes: Array<[string, string]> = [];
    const keys: Array<[string, string, string]> = [];
    const entries: Array<[string, string, string, string]> = [];
    const bindOf = (orgId: string, kind: BindingKind, value: string | undefined, member: string | undefined): void => {
      if (value === undefined) return;
      keys.push([orgId, kind, value]);
      if (member !== undefined) entries.push([orgId, kind, value, member]);
    };
    for (const r of resolves) {
      nodes.push([r.orgId, r.user]);
      bindOf(r.orgId, "session", r.session, r.user);
      bindOf(r.orgId, "fingerprint", r.fingerprint, r.user);
      bindOf(r.orgId, "ip", r.ip, r.user);
      bindOf(r.orgId, "prefix", r.prefix, r.user);
      bindOf(r.orgId, "email", r.email, r.user);
      bindOf(r.orgId, "session_email", r.session, r.email);
    }
    for (const m of meters) {
      if (m.user !== undefined) nodes.push([m.orgId, m.user]);
      bindOf(m.orgId, "session", m.session, undefined);
    }
    this.keys.prime(keys);
    this.entries.prime(entries);
    for (const k of keys) {
      const rep = this.keys.get(k)?.rep;
      if (rep !== undefined && k[1] !== "session_email") nodes.push([k[0], rep]);
    }
    this.nodes.prime(nodes);
  }

  /** Records the bindings of one resolve and answers the counts. Must run in a write transaction. */
  resolve(r: ResolveRequest): ResolveCounts {
    const wasKnown = this.nodes.get([r.orgId, r.user]) !== undefined;
    if (!wasKnown) this.nodes.put([r.orgId, r.user], { parent: r.user, size: 1 });
    const bind = (kind: BindingKind, value: string | undefined, member: string, link: boolean): number => {
      if (value === undefined) return 0;
      const k: [string, string, string] = [r.orgId, kind, value];
      let meta = this.keys.get(k);
      const entry: [string, string, string, string] = [r.orgId, kind, value, member];
      const seen = this.entries.get(entry);
      const fresh = seen === undefined;
      // Last-seen drives retention only (90 days by default): refreshing it once a day is enough,
      // and spares a write per key on every repeat login.
      if (fresh || r.nowMs - seen > this.refreshMs) this.entries.put(entry, r.nowMs);
      if (!meta) meta = { count: 0, rep: member };
      if (fresh) {
        meta = { count: meta.count + 1, rep: meta.rep };
        this.keys.put(k, meta);
      }
      // An identifier many accounts share (a common device model's fingerprint, an office NAT) says
      // little about one person: it is counted, but links accounts only while few share it.
      if (link && meta.rep !== member && meta.count <= LINK_MAX_ACCOUNTS) this.union(r.orgId, meta.rep, member);
      return meta.count - 1; // distinct others
    };
    const counts: ResolveCounts = {
      accounts_sharing_session: bind("session", r.session, r.user, true),
      accounts_sharing_fingerprint: bind("fingerprint", r.fingerprint, r.user, true),
      accounts_sharing_ip: bind("ip", r.ip, r.user, !r.sharedNetwork),
      accounts_sharing_prefix: bind("prefix", r.prefix, r.user, false),
      linked_emails: 0,
      linked_accounts: 0,
      new_account: !wasKnown,
    };
    bind("email", r.email, r.user, true);
    if (r.session !== undefined && r.email !== undefined) counts.linked_emails = bind("session_email", r.session, r.email, false);
    else if (r.session !== undefined) counts.linked_emails = this.keys.get([r.orgId, "session_email", r.session])?.count ?? 0;
    counts.linked_accounts = this.size(r.orgId, r.user) - 1;
    return counts;
  }

  /**
   * One metered request against a sliding window: the budget is kept under the identity's
   * linked accounts (their cluster root) when the account is known, else under the session or
   * the IP. Allowed when the units used in (now - window, now] plus this cost fit in `max`.
   */
  meter(m: MeterRequest): MeterOutcome {
    let budgetKey: string;
    let budget: MeterOutcome["budget"];
    let linked = 0;
    const viaSession = m.session !== undefined ? this.keys.get([m.orgId, "session", m.session])?.rep : undefined;
    const account = m.user ?? viaSession;
    if (account !== undefined && this.nodes.get([m.orgId, account]) !== undefined) {
      const root = this.find(m.orgId, account);
      budgetKey = `a:${root}`;
      budget = "account";
      linked = this.size(m.orgId, root) - 1;
    } else if (m.user !== undefined) {
      budgetKey = `a:${m.user}`;
      budget = "account";
    } else if (m.session !== undefined) {
      budgetKey = `s:${m.session}`;
      budget = "session";
    } else {
      budgetKey = `i:${m.ip ?? ""}`;
      budget = "ip";
    }
    const key: [string, string, string] = [m.orgId, budgetKey, m.resource];
    const from = m.nowMs - m.windowMs;
    // Keep only entries inside the window.
    const old = this.getLog(key);
    let start = 0;
    while (start < old.length && old[start]! <= from) start += 2;
    let used = 0;
    for (let i = start; i < old.length; i += 2) used += old[i + 1]!;
    if (used + m.cost <= m.max) {
      const next = new Float64Array(old.length - start + 2);
      next.set(old.subarray(start));
      next[next.length - 2] = m.nowMs;
      next[next.length - 1] = m.cost;
      this.putLog(key, next);
      return { allowed: true, count: used + m.cost, linked_identities: linked, budget, retry_at: null };
    }
    // When will enough units have left the window?
    let free = m.max - used;
    let retryAt: number | null = null;
    for (let i = start; i < old.length; i += 2) {
      free += old[i + 1]!;
      if (free >= m.cost) {
        retryAt = old[i]! + m.windowMs; // the window is (now - window, now]: it has left by then
        break;
      }
    }
    if (start > 0) this.putLog(key, old.slice(start));
    return { allowed: false, count: used, linked_identities: linked, budget, retry_at: retryAt };
  }

  /**
   * Deletes bindings last seen before the retention window and lowers their keys' counts. At
   * most `limit` removals and `limit * 20` entries examined per call, so each call is a short
   * transaction; `pruning` says whether the pass has more to do (the writer calls again).
   * Clusters are kept: an old link still ties a budget together. Returns how many were removed.
   */
  prune(nowMs: number, limit = 5000): number {
    const cutoff = nowMs - this.retentionMs;
    let removed = 0;
    let examined = 0;
    for (const { key, value } of this.dbs.bindings.getRange({ start: this.pruneCursor ?? undefined })) {
      if (removed >= limit || examined >= limit * 20) {
        this.pruneCursor = key;
        return removed;
      }
      examined++;
      if (value >= cutoff) continue;
      this.entries.remove(key);
      const k: [string, string, string] = [key[0], key[1], key[2]];
      const meta = this.keys.get(k);
      if (meta) {
        if (meta.count <= 1) this.keys.remove(k);
        else this.keys.put(k, { count: meta.count - 1, rep: meta.rep });
      }
      removed++;
    }
    this.pruneCursor = null;
    return removed;
  }

  private pruneCursor: [string, string, string, string] | null = null;
  private meterCursor: [string, string, string] | null = null;

  /**
   * Deletes meter logs whose newest entry is older than the longest window (31 days): a budget
   * nobody used for that long holds nothing. Bounded like prune(); returns how many were removed.
   */
  pruneMeters(nowMs: number, limit = 5000): number {
    const cutoff = nowMs - MAX_WINDOW_MS;
    let removed = 0;
    let examined = 0;
    for (const { key, value } of this.dbs.meters.getRange({ start: this.meterCursor ?? undefined })) {
      if (removed >= limit || examined >= limit * 20) {
        this.meterCursor = key;
        return removed;
      }
      examined++;
      const log = asLog(value);
      const newest = log.length >= 2 ? log[log.length - 2]! : 0;
      if (newest > cutoff) continue;
      this.removeLog(key);
      removed++;
    }
    this.meterCursor = null;
    return removed;
  }

  /** True while a meter prune pass has stopped part-way. */
  get pruningMeters(): boolean {
    return this.meterCursor !== null;
  }

  /** True while a prune pass has stopped part-way (call prune again). */
  get pruning(): boolean {
    return this.pruneCursor !== null;
  }

  private find(org: string, user: string): string {
    let x = user;
    for (;;) {
      const node = this.nodes.get([org, x]);
      if (!node || node.parent === x) return x;
      const parent = this.nodes.get([org, node.parent]);
      if (parent && parent.parent !== node.parent) this.nodes.put([org, x], { parent: parent.parent, size: node.size }); // path halving
      x = node.parent;
    }
  }

  private size(org: string, user: string): number {
    return this.nodes.get([org, this.find(org, user)])?.size ?? 1;
  }

  private union(org: string, a: string, b: string): void {
    const ra = this.find(org, a);
    const rb = this.find(org, b);
    if (ra === rb) return;
    const na = this.nodes.get([org, ra]) ?? { parent: ra, size: 1 };
    const nb = this.nodes.get([org, rb]) ?? { parent: rb, size: 1 };
    const [big, small, nBig, nSmall] = na.size >= nb.size ? [ra, rb, na, nb] : [rb, ra, nb, na];
    this.nodes.put([org, small], { parent: big, size: nSmall.size });
    this.nodes.put([org, big], { parent: big, size: nBig.size + nSmall.size });
    this.moveMeters(org, `a:${small}`, `a:${big}`);
  }

  /**
   * Folds every account window whose account is no longer its cluster's root into the root's
   * window (the same move a merge makes). The state environment commits before the meters one,
   * so a process killed between the two leaves a merge without its move; the writer runs this at
   * start, and after a failed batch. Must run in a write transaction over both environments.
   * Returns how many windows moved.
   */
  repairBudgets(): number {
    const stray: Array<{ org: string; user: string }> = [];
    let lastOrg = "";
    let lastBudget = "";
    for (const key of this.dbs.meters.getKeys({})) {
      const [org, budget] = key as [string, string, string];
      if ((org === lastOrg && budget === lastBudget) || !budget.startsWith("a:")) continue;
      lastOrg = org;
      lastBudget = budget;
      const user = budget.slice(2);
      if (this.nodes.get([org, user]) !== undefined && this.find(org, user) !== user) stray.push({ org, user });
    }
    let moved = 0;
    for (const { org, user } of stray) moved += this.moveMeters(org, `a:${user}`, `a:${this.find(org, user)}`);
    return moved;
  }

  /** Moves every meter log of one budget into another (merging logs of the same resource); returns how many. */
  private moveMeters(org: string, from: string, to: string): number {
    const moving = [...this.dbs.meters.getRange({ start: [org, from], end: [org, `${from}\u0000`] })];
    let moved = 0;
    for (const { key, value } of moving) {
      if (key[0] !== org || key[1] !== from) continue;
      const target: [string, string, string] = [org, to, key[2]];
      const merged = mergeLogs(this.getLog(target), asLog(value));
      this.putLog(target, merged);
      this.removeLog(key);
      moved++;
    }
    return moved;
  }
}
