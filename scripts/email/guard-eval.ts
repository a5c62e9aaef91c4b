/**
 * Leave-one-list-out evaluation of the e-mail guard (src/datasets/email-lists.ts): does it hold for
 * free providers that no list names, and what would a rule that trusts the disposable lists less
 * cost in throw-away domains no longer caught?
 *
 * - Unlisted free providers: freemail's free list and the `provider` entries of
 *   data/email-never-disposable.json are hidden; each of their domains that the rest of the guard
 *   then calls disposable (and the full guard does not) is a free provider that no list names
 *   called disposable. Caveat: freemail builds its free list by deleting what its own disposable
 *   list names, and that list is inside disposable-email-domains and disposable-domains, so this
 *   estimate cannot see a provider wrongly named by that lineage (21cn.com is one).
 * - Consensus: domains named by at least 3 of the 6 disposable lists (the two files of
 *   disposable-email-domains count as one list) that the full guard keeps disposable.
 * - Held-out lists: each independent list (mailchecker, disposable-email-domains-js, fakefilter,
 *   and the freemail / disposable-email-domains / disposable-domains lineage, whose lists contain
 *   each other) is hidden in turn; the share of its domains (those the full guard keeps) that the
 *   other lists still call disposable is the recall on a throw-away list we do not ship.
 *
 * Candidate rules (CANDIDATES) demote a listed domain when every entry it matches (the host or a
 * parent) is weak by the rule; each is measured on all three. The shipped guard is `none`.
 */
import { getDomainWithoutSuffix } from "tldts-icann";
import { buildEmailLists, readNeverDisposable, readPackageEmailLists } from "../../src/datasets/email-lists.js";
import { DISPOSABLE_SOURCES, FREE_SOURCE, readDomainList } from "../../src/datasets/email-sources.js";

/** The targets of issue 28 ("Disposable e-mail"), as fractions. */
export const EMAIL_GUARD_TARGETS = Object.freeze({
  /** Free providers no list names that are called disposable: at most 1 in 40. */
  unlistedFreeDisposable: 0.025,
  /** Consensus-disposable domains still disposable: at least this share. */
  consensusKept: 0.99,
  /** Consensus: named by at least this many of the lists. */
  consensusLists: 3,
});

/** A list as the evaluation counts it: one package (disposable-email-domains' two files are one). */
export type GuardList = "freemail" | "disposable-email-domains" | "mailchecker" | "disposable-email-domains-js" | "disposable-domains" | "fakefilter";

/** What is hidden for a held-out recall: one list, or the lineage whose lists contain each other. */
export type HeldOut = { name: string; lists: readonly GuardList[] };

export const HELD_OUT: readonly HeldOut[] = [
  { name: "mailchecker", lists: ["mailchecker"] },
  { name: "disposable-email-domains-js", lists: ["disposable-email-domains-js"] },
  { name: "fakefilter", lists: ["fakefilter"] },
  { name: "freemail + disposable-email-domains + disposable-domains", lists: ["freemail", "disposable-email-domains", "disposable-domains"] },
];

/** What a candidate rule sees of one list entry. */
export interface EntryFacts {
  domain: string;
  /** The lists naming it, among those in play. */
  lists: readonly GuardList[];
  /** Listed domains (itself included) with the same stem (see stemOf): a family of throw-away names. Computed on call. */
  siblings(): number;
}

/** A candidate rule: an entry it calls weak no longer makes a domain disposable. */
export interface CandidateRule {
  name: string;
  weak(e: EntryFacts): boolean;
}

const LEGACY_TLDS: ReadonlySet<string> = new Set(["com", "net", "org", "edu", "gov", "mil", "int", "info", "biz"]);

/**
 * A registrable name (nothing left of the registered label) whose label is letters with at most
 * one hyphen, under a legacy TLD or a two-letter country code: the shape of an old brand domain
 * (`consultant.com`, `hush.ai`), not of a generated one (`p0dl9ik.giize.com`, `kemelmaka.cfd`).
 */
export function isBrandShaped(domain: string): boolean {
  const label = getDomainWithoutSuffix(domain);
  if (label === null || domain.indexOf(".") !== label.length) return false;
  const tld = domain.slice(domain.lastIndexOf(".") + 1);
  return /^[a-z]+(?:-[a-z]+)?$/.test(label) && (LEGACY_TLDS.has(tld) || tld.length === 2);
}

/** A letters-only name of at most 10 letters directly under .com, .net or .org (`hush.com`, `tom.com`). */
export function isShortLegacyName(domain: string): boolean {
  return /^[a-z]{1,10}\.(?:com|net|org)$/.test(domain);
}

/** The registered label without digits and hyphens: `mailinator5.com` and `mailinator.net` share `mailinator`. */
export function stemOf(domain: string): string {
  return (getDomainWithoutSuffix(domain) ?? domain).replace(/[0-9-]+/g, "");
}

const once = (e: EntryFacts): boolean => e.lists.length === 1;

export const CANDIDATES: readonly CandidateRule[] = [
  { name: "none (the shipped guard)", weak: () => false },
  { name: "named by one list only", weak: once },
  { name: "named by mailchecker only", weak: (e) => once(e) && e.lists[0] === "mailchecker" },
  { name: "named by one list only, brand-shaped name", weak: (e) => once(e) && isBrandShaped(e.domain) },
  { name: "named by mailchecker only, brand-shaped name", weak: (e) => once(e) && e.lists[0] === "mailchecker" && isBrandShaped(e.domain) },
  { name: "named by mailchecker only, short .com/.net/.org name", weak: (e) => once(e) && e.lists[0] === "mailchecker" && isShortLegacyName(e.domain) },
  { name: "named by one list only, no sibling name listed", weak: (e) => once(e) && e.siblings() === 1 },
];

/** A share with its counts. */
export interface Share {
  n: number;
  hit: number;
  rate: number;
  /** Up to 12 domains counted in `hit`, for the report. */
  examples: string[];
}

export interface CandidateRow {
  rule: string;
  /** Free providers no list names, called disposable. */
  unlistedFreeDisposable: Share;
  /** Consensus-disposable domains still disposable. */
  consensusKept: Share;
  /** Listed domains the full guard keeps that the rule demotes. */
  demoted: Share;
  /** Per held-out list: its domains still called disposable by the others. */
  heldOut: { name: string; caught: Share }[];
}

export interface EmailGuardEvaluation {
  providers: number;
  /** Unlisted free providers called disposable by the shipped guard, by how many lists name them. */
  leaksByListCount: Record<number, number>;
  rows: CandidateRow[];
}

/** The lists as Sets, one per package (the union of disposable-email-domains' two files). */
function readGuardLists(): Map<GuardList, Set<string>> {
  const byList = new Map<GuardList, Set<string>>();
  for (const spec of DISPOSABLE_SOURCES) {
    const id = spec.package as GuardList;
    const set = byList.get(id) ?? new Set<string>();
    for (const d of readDomainList(spec).domains) set.add(d);
    byList.set(id, set);
  }
  return byList;
}

function share(n: number, hits: string[]): Share {
  return { n, hit: hits.length, rate: n === 0 ? 0 : hits.length / n, examples: hits.slice(0, 12) };
}

/**
 * Runs the evaluation on the installed lists.
 * @example evaluateEmailGuard().rows[0].unlistedFreeDisposable.rate // the shipped guard's share
 */
export function evaluateEmailGuard(candidates: readonly CandidateRule[] = CANDIDATES): EmailGuardEvaluation {
  const src = readPackageEmailLists();
  const byList = readGuardLists();
  const names = [...byList.keys()];
  const named = new Map<string, GuardList[]>();
  for (const [id, set] of byList) {
    for (const d of set) {
      const lists = named.get(d);
      if (lists === undefined) named.set(d, [id]);
      else lists.push(id);
    }
  }
  const excluded = new Set([...src.excludedSuffixes].map((s) => s.replace(/^\.+/, "")));
  const stems = new Map<string, number>();
  for (const d of named.keys()) {
    const stem = stemOf(d);
    stems.set(stem, (stems.get(stem) ?? 0) + 1);
  }

  /** Whether the rule demotes a domain: every entry it matches, among `inPlay` lists, is weak. */
  const demotes = (rule: CandidateRule, domain: string, inPlay: ReadonlySet<GuardList>): boolean => {
    for (let name = domain, first = true; name.indexOf(".") > 0; first = false) {
      const listed = named.get(name) ?? [];
      const lists = inPlay.size === names.length ? listed : listed.filter((l) => inPlay.has(l));
      if (lists.length > 0 && (first || !excluded.has(name)) && !rule.weak({ domain: name, lists, siblings: () => stems.get(stemOf(name)) ?? 0 })) return false;
      name = name.slice(name.indexOf(".") + 1);
    }
    return true;
  };

  const full = buildEmailLists(src);
  const never = readNeverDisposable();
  const providerNames = never.domains.filter((d) => d.category === "provider").map((d) => d.domain);
  const providers = [...new Set([...readDomainList(FREE_SOURCE).domains, ...providerNames])];
  const withoutProviders = buildEmailLists({ ...src, free: [], neverDisposable: never.domains.filter((d) => d.category !== "provider").map((d) => d.domain) });
  const leaks = providers.filter((d) => withoutProviders.isDisposable(d) && !full.isDisposable(d));
  const leaksByListCount: Record<number, number> = {};
  for (const d of leaks) {
    const c = matchedListCount(d, named);
    leaksByListCount[c] = (leaksByListCount[c] ?? 0) + 1;
  }

  const all = new Set(names);
  // The full guard's verdicts, once: every listed domain is asked below, many times over.
  const kept = [...named.keys()].filter((d) => full.isDisposable(d));
  const isKept = new Set(kept);
  const consensus = kept.filter((d) => named.get(d)!.length >= EMAIL_GUARD_TARGETS.consensusLists);
  const heldOut = HELD_OUT.map((h) => {
    const rest = new Set(names.filter((l) => !h.lists.includes(l)));
    const lists = buildEmailLists({ ...src, disposable: [...rest].flatMap((l) => [...byList.get(l)!]) });
    const own = new Set(h.lists.flatMap((l) => [...byList.get(l)!]).filter((d) => isKept.has(d)));
    return { h, rest, own, caught: [...own].filter((d) => lists.isDisposable(d)) };
  });

  const rows = candidates.map((rule): CandidateRow => {
    return {
      rule: rule.name,
      unlistedFreeDisposable: share(
        providers.length,
        leaks.filter((d) => !demotes(rule, d, all)),
      ),
      consensusKept: share(
        consensus.length,
        consensus.filter((d) => !demotes(rule, d, all)),
      ),
      demoted: share(
        kept.length,
        kept.filter((d) => demotes(rule, d, all)),
      ),
      heldOut: heldOut.map(({ h, rest, own, caught }) => ({
        name: h.name,
        caught: share(
          own.size,
          caught.filter((d) => !demotes(rule, d, rest)),
        ),
      })),
    };
  });
  return { providers: providers.length, leaksByListCount, rows };
}

/** How many lists name the entry a domain matches first (the host, else the nearest listed parent). */
function matchedListCount(domain: string, named: ReadonlyMap<string, readonly GuardList[]>): number {
  for (let name = domain; name.indexOf(".") > 0; name = name.slice(name.indexOf(".") + 1)) {
    const lists = named.get(name);
    if (lists !== undefined) return lists.length;
  }
  return 0;
}

const fmt = (x: number): string => x.toLocaleString("en-US");
const pct = (s: Share): string => `${(s.rate * 100).toFixed(2)}% (${fmt(s.hit)}/${fmt(s.n)})`;

/** The evaluation as Markdown tables (the form docs/data.md quotes). */
export function formatEmailGuardEvaluation(e: EmailGuardEvaluation, withExamples = false): string {
  const t = EMAIL_GUARD_TARGETS;
  const held = e.rows[0]!.heldOut.map((h) => h.name);
  const lines = [
    `| rule | unlisted free providers called disposable (target <= ${t.unlistedFreeDisposable * 100}%) | consensus-disposable kept (target >= ${t.consensusKept * 100}%) | listed domains demoted | ${held.map((h) => `${h} hidden: still caught`).join(" | ")} |`,
    `|---|--:|--:|--:|${held.map(() => "--:|").join("")}`,
  ];
  for (const r of e.rows) {
    lines.push(
      `| ${r.rule} | ${pct(r.unlistedFreeDisposable)} | ${pct(r.consensusKept)} | ${pct(r.demoted)} | ${r.heldOut.map((h) => pct(h.caught)).join(" | ")} |`,
    );
  }
  const byCount = Object.entries(e.leaksByListCount).map(([c, n]) => `${n} named by ${c} list${c === "1" ? "" : "s"}`);
  lines.push("", `Unlisted free providers called disposable by the shipped guard: ${byCount.join(", ")}.`);
  if (withExamples) for (const r of e.rows) lines.push(`  ${r.rule}: still called disposable e.g. ${r.unlistedFreeDisposable.examples.join(" ")}`);
  return lines.join("\n");
}
