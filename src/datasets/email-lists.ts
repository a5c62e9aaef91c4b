/**
 * E-mail classification lists: disposable domains, free-mail providers and role local parts,
 * read once from npm packages (datasets/email-sources.ts has one reader per file; docs/data.md,
 * "Email data", has versions, licences and counts), then answered from Sets.
 *
 * - disposable: the union of freemail's `disposable.txt`, disposable-email-domains (ivolo,
 *   `index.json` and `wildcard.json`), mailchecker, disposable-email-domains-js, disposable-domains
 *   and fakefilter. Matched on the host and every parent domain with at least two labels
 *   (`a.b.dynv6.net` -> `b.dynv6.net` -> `dynv6.net`), as the lists intend: several of them name
 *   a parent to catch every throw-away host under it.
 * - free: freemail's `free.txt` (ISC). Matched on the host and its parents, like freemail's own
 *   `isFree`.
 * - excluded suffixes: freemail's `blacklist.txt` (`.ddns.org`, `.freeservers.com`, `.zzn.com`,
 *   `.findhere.com`): hosting services whose subdomains belong to unrelated users. Such a domain
 *   never matches as a parent, on any list, so an unlisted `anyone.zzn.com` is not classified
 *   through `zzn.com`; exact entries (`aaamail.zzn.com`, a branded free webmail) still count.
 * - role: role-based-email-addresses (MIT, Mixmax): the whole local part, lower-cased, with its
 *   category (marketing / notification / meeting / other; the first category wins on duplicates).
 *
 * The guard: six lists of throw-away domains, each with its own errors, must never call a real
 * provider or an organisation's domain disposable. A listed domain is NOT disposable when
 * 1. it is a public suffix: the ICANN section of the Public Suffix List (tldts-icann: `co.uk`,
 *    `edu.pl`, `web.id`) or a registry namespace of data/email-never-disposable.json (`za.com`,
 *    `eu.org`, `msk.ru`). Such an entry never matches, neither by itself nor for names under it;
 *    entries for names registered under it (`00.msk.ru`) do;
 * 2. it, or a parent, is on data/email-never-disposable.json (major providers such as 21cn.com,
 *    forwarding services of known organisations such as duck.com and privaterelay.appleid.com,
 *    institution-only namespaces such as `edu` and `ac.uk`); or
 * 3. it, or a parent, is on freemail's free list, unless that free entry sits under a domain the
 *    disposable lists name (`shitaway.usa.cc` under `usa.cc`): such a host is one of the
 *    throw-away names of that service, so it is disposable and not free.
 * Dynamic-DNS and free-subdomain parents (`ddns.net`, `dynv6.net`, `cloudns.asia`, the PSL's private
 * section) are deliberately not suffixes here: throw-away hosts under them are what the parent
 * match is for.
 * A domain named by one list only counts as much as one named by all six: leaving lists out
 * (scripts/email-guard-eval.ts; docs/data.md, "Free providers that no list names") shows that
 * trusting such a domain less saves fewer free providers than it loses throw-away domains.
 *
 * The guard is applied lazily, only when a lookup hits a listed domain (a few Set probes and one
 * public-suffix check), so loading stays a matter of filling Sets. auditEmailLists applies it to
 * every entry at once, for the tests and docs/data.md.
 *
 * Loading reads ~420,000 entries into ~165,000 distinct domains: ~0.4-0.9 s of CPU and ~13 MB of
 * heap on the 2-core development machine (docs/data.md, "The guard", has the measurements);
 * `emailLists()` does it once per process (call it at boot to keep it off the first request).
 */
import { readFileSync } from "node:fs";
import { getPublicSuffix } from "tldts-icann";
import { REPO_ROOT } from "../config/index.js";
import {
  DISPOSABLE_SOURCES,
  EXCLUDED_SUFFIX_SOURCE,
  FREE_SOURCE,
  parseNeverDisposable,
  readDomainList,
  readRoleLists,
  type NeverDisposableList,
  type RoleCategory,
} from "./email-sources.js";

export type { RoleCategory } from "./email-sources.js";

/** Path of the curated never-disposable list. */
export const NEVER_DISPOSABLE_FILE = `${REPO_ROOT}/data/email-never-disposable.json`;

/** The lists, as lookups. All inputs are lower-case ASCII (A-label) domains or local parts. */
export interface EmailLists {
  /** Whether the host or one of its parent domains (>= 2 labels) is a disposable-mail domain, after the guard. */
  isDisposable(domain: string): boolean;
  /** Whether the host or a parent domain (>= 2 labels) is a free-mail provider (and not disposable). */
  isFree(domain: string): boolean;
  /** The role category of a whole local part (lower-case, +tag removed), or null. */
  roleCategory(localPart: string): RoleCategory | null;
  /**
   * Entry counts, for logs and the docs. `disposable` counts the merged lists' distinct entries
   * before the guard (auditEmailLists gives the count after it).
   */
  readonly counts: { disposable: number; free: number; role: number; excludedSuffixes: number; neverDisposable: number; registrySuffixes: number };
}

/** Raw list contents; `buildEmailLists` turns them into lookups (tests pass small ones). */
export interface EmailListSources {
  disposable: Iterable<string>;
  free: Iterable<string>;
  /** Suffixes such as ".ddns.org": never matched as a parent domain (exact entries still count). */
  excludedSuffixes: Iterable<string>;
  roles: Partial<Record<RoleCategory, Iterable<string>>>;
  /** Never disposable, nor any name under them (curated: providers, forwarders, institutions). */
  neverDisposable?: Iterable<string>;
  /** Registry namespaces treated as public suffixes, on top of `isPublicSuffix`. */
  registrySuffixes?: Iterable<string>;
  /** Whether a name is a public suffix; default: the ICANN section of the PSL (tldts-icann). */
  isPublicSuffix?: (domain: string) => boolean;
}

/** Why the guard keeps a listed domain from being disposable. */
export type GuardRule = "public_suffix" | "never_disposable" | "free_provider";

/** One listed disposable domain the guard removes, and the entry that caused it. */
export interface GuardRemoval {
  domain: string;
  rule: GuardRule;
  /** The public suffix itself, or the never-disposable / free entry (the domain or a parent). */
  by: string;
}

/** Every decision the guard makes over the whole lists (auditEmailLists). */
export interface EmailGuardAudit {
  /** Distinct disposable entries before the guard. */
  listed: number;
  /** Disposable entries after it. */
  kept: number;
  /** Removed entries, sorted by domain. */
  removed: GuardRemoval[];
  /** Free-list hosts under a domain the disposable lists name: disposable, not free. Sorted. */
  freeDropped: { domain: string; under: string }[];
}

const ROLE_ORDER: readonly RoleCategory[] = ["marketing", "notification", "meeting", "other"];

/** ICANN public suffix: tldts-icann's answer for a name is the name itself. */
export function isIcannPublicSuffix(domain: string): boolean {
  return getPublicSuffix(domain) === domain;
}

const HIT_MEMO_MAX = 50_000;

/** The Sets and the guard, shared by the lookups and the audit. */
class Matcher {
  readonly disposable: ReadonlySet<string>;
  readonly free: ReadonlySet<string>;
  readonly excluded: ReadonlySet<string>;
  readonly never: ReadonlySet<string>;
  readonly registry: ReadonlySet<string>;
  private readonly icann: (domain: string) => boolean;

  constructor(src: EmailListSources) {
    this.excluded = new Set([...clean(src.excludedSuffixes)].map((s) => s.replace(/^\.+/, "")));
    this.disposable = clean(src.disposable);
    this.free = clean(src.free);
    this.never = clean(src.neverDisposable ?? []);
    this.registry = clean(src.registrySuffixes ?? []);
    this.icann = src.isPublicSuffix ?? isIcannPublicSuffix;
  }

  isPublicSuffix(name: string): boolean {
    return this.registry.has(name) || this.icann(name);
  }

  /**
   * The entry of `set` that the host or a parent (>= 2 labels) matches, or null. A parent that
   * is an excluded suffix never matches (the exact host still does); with `skipSuffixes`, an entry
   * that is a public suffix never matches at all (checked only on a hit, so rarely).
   */
  match(set: ReadonlySet<string>, domain: string, skipSuffixes: boolean): string | null {
    if (set.has(domain) && !(skipSuffixes && this.isPublicSuffix(domain))) return domain;
    let i = domain.indexOf(".");
    while (i >= 0) {
      const rest = domain.slice(i + 1);
      // Stop when the rest has no dot left: a bare TLD is never a list entry.
      if (rest.indexOf(".") < 0) return null;
      if (set.has(rest) && !this.excluded.has(rest) && !(skipSuffixes && this.isPublicSuffix(rest))) return rest;
      i = domain.indexOf(".", i + 1);
    }
    return null;
  }

  /** The listed disposable domain the host falls under, before the guard. */
  listedDisposable(domain: string): string | null {
    return this.match(this.disposable, domain, true);
  }

  /** The disposable entry a free-list host sits under (a strict parent), or null. */
  disposableParentOf(freeEntry: string): string | null {
    const dot = freeEntry.indexOf(".");
    return dot < 0 ? null : this.listedDisposable(freeEntry.slice(dot + 1));
  }

  /** Why a listed host is not disposable after all (rules 2 and 3 of the module comment), or null. */
  guard(domain: string): GuardRemoval | null {
    // Rule 2: the host or any parent, bare TLDs (`edu`) included.
    for (let name = domain; ; ) {
      if (this.never.has(name)) return { domain, rule: "never_disposable", by: name };
      const dot = name.indexOf(".");
      if (dot < 0) break;
      name = name.slice(dot + 1);
    }
    // Rule 3: a free entry that is the host or a parent, unless it sits under a disposable one.
    let rest = domain;
    for (;;) {
      const free = this.match(this.free, rest, true);
      if (free === null) return null;
      if (this.disposableParentOf(free) === null) return { domain, rule: "free_provider", by: free };
      // That free entry does not count; a free entry higher up might.
      const dot = free.indexOf(".");
      rest = free.slice(dot + 1);
      if (rest.indexOf(".") < 0) return null;
    }
  }

  /** Verdicts for hosts that hit a list (real traffic repeats them); bounded, cleared when full. */
  private readonly hitMemo = new Map<string, boolean>();

  isDisposable(domain: string): boolean {
    // A miss (almost all traffic) costs only the Set probes; a hit pays for the guard once.
    if (!this.disposable.has(domain) && !this.anyParentIn(this.disposable, domain)) return false;
    const known = this.hitMemo.get(domain);
    if (known !== undefined) return known;
    const verdict = this.listedDisposable(domain) !== null && this.guard(domain) === null;
    if (this.hitMemo.size >= HIT_MEMO_MAX) this.hitMemo.clear();
    this.hitMemo.set(domain, verdict);
    return verdict;
  }

  /** Whether a parent (>= 2 labels) is in the set, before any exclusion: the cheap pre-check. */
  private anyParentIn(set: ReadonlySet<string>, domain: string): boolean {
    for (let i = domain.indexOf("."); i >= 0; i = domain.indexOf(".", i + 1)) {
      const rest = domain.slice(i + 1);
      if (rest.indexOf(".") < 0) return false;
      if (set.has(rest)) return true;
    }
    return false;
  }
}

/**
 * Builds the lookups from raw lists (lower-cased, trimmed, blanks and `#` comments dropped).
 * @example buildEmailLists({ disposable: ["mailinator.com"], free: ["gmail.com"], excludedSuffixes: [], roles: { other: ["info"] } })
 */
export function buildEmailLists(src: EmailListSources): EmailLists {
  const m = new Matcher(src);
  const roles = new Map<string, RoleCategory>();
  for (const cat of ROLE_ORDER) for (const r of clean(src.roles[cat] ?? [])) if (!roles.has(r)) roles.set(r, cat);
  return {
    isDisposable: (domain) => m.isDisposable(domain),
    isFree: (domain) => !m.isDisposable(domain) && m.match(m.free, domain, true) !== null,
    roleCategory: (local) => roles.get(local) ?? null,
    counts: {
      disposable: m.disposable.size,
      free: m.free.size,
      role: roles.size,
      excludedSuffixes: m.excluded.size,
      neverDisposable: m.never.size,
      registrySuffixes: m.registry.size,
    },
  };
}

/**
 * Applies the guard to every entry at once: what it removes, and which free hosts become
 * disposable. For the tests (a new list version cannot add a removal silently) and docs/data.md;
 * the service itself applies the guard lazily.
 * @example auditEmailLists(readPackageEmailLists()).kept // disposable entries after the guard
 */
export function auditEmailLists(src: EmailListSources): EmailGuardAudit {
  const m = new Matcher(src);
  const removed: GuardRemoval[] = [];
  for (const d of m.disposable) {
    if (m.isPublicSuffix(d)) removed.push({ domain: d, rule: "public_suffix", by: d });
    else {
      const g = m.guard(d);
      if (g !== null) removed.push(g);
    }
  }
  const freeDropped: { domain: string; under: string }[] = [];
  for (const f of m.free) {
    if (m.never.has(f)) continue;
    const under = m.disposableParentOf(f);
    if (under !== null && m.guard(f) === null) freeDropped.push({ domain: f, under });
  }
  const byDomain = <T extends { domain: string }>(a: T, b: T): number => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0);
  return { listed: m.disposable.size, kept: m.disposable.size - removed.length, removed: removed.sort(byDomain), freeDropped: freeDropped.sort(byDomain) };
}

/** Lower-cased, trimmed entries; blanks and `#` comments dropped. */
function clean(values: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const v of values) {
    const t = v.trim().toLowerCase();
    if (t.length > 0 && t.charCodeAt(0) !== 35) out.add(t);
  }
  return out;
}

/** The curated list, read and checked (data/email-never-disposable.json). */
export function readNeverDisposable(): NeverDisposableList {
  return parseNeverDisposable(readFileSync(NEVER_DISPOSABLE_FILE, "utf8"));
}

/**
 * The package lists and the curated list, read through datasets/email-sources.ts (which fails
 * on an unexpected shape, a short list or too many malformed entries).
 */
export function readPackageEmailLists(): EmailListSources {
  const never = readNeverDisposable();
  return {
    disposable: DISPOSABLE_SOURCES.flatMap((spec) => readDomainList(spec).domains),
    free: readDomainList(FREE_SOURCE).domains,
    excludedSuffixes: readDomainList(EXCLUDED_SUFFIX_SOURCE).domains,
    roles: readRoleLists(),
    neverDisposable: never.domains.map((d) => d.domain),
    registrySuffixes: never.registrySuffixes.map((r) => r.suffix),
  };
}

let loaded: EmailLists | undefined;

/** The process-wide lists from the npm packages, built on first call. */
export function emailLists(): EmailLists {
  loaded ??= buildEmailLists(readPackageEmailLists());
  return loaded;
}
