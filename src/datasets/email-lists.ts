/**
 * E-mail classification lists: disposable domains, free-mail providers and role local parts.
 * Read once from the npm packages (real dependencies, see docs/data.md, "Email data", for the
 * snapshot and provenance), then answered from Sets:
 *
 * - disposable: `freemail/data/disposable.txt` (ISC; already the union of ivolo's list and older
 *   entries) plus `disposable-email-domains` `index.json` and `wildcard.json` (MIT, ivolo; may be
 *   newer than the copy inside freemail). Matched on the host and every parent domain with at
 *   least two labels (`a.b.dynv6.net` -> `b.dynv6.net` -> `dynv6.net`): that covers the registrable
 *   domain without a public-suffix table. Parents that are public suffixes (`edu.pl`, `web.id`,
 *   `co.uk`, ...; a few are list entries) only match themselves, never their subdomains.
 * - free: `freemail/data/free.txt` (ISC). Matched on the host and its parents, like freemail's own
 *   `isFree` (which uses the registrable domain); a domain on both lists counts as disposable only.
 * - excluded suffixes: `freemail/data/blacklist.txt` (`.ddns.org`, `.freeservers.com`, `.zzn.com`,
 *   `.findhere.com`): hosting services whose subdomains belong to unrelated users, which freemail
 *   "refuses to add to either list". Its update script drops exact matches of the dotted text
 *   only, which never occur, so free.txt still lists `zzn.com` and ten named hosts under these
 *   suffixes (e.g. `aaamail.zzn.com`, a branded free webmail). We keep the exact entries and apply
 *   the suffixes where they matter: such a domain never matches as a parent, so an unlisted
 *   `anyone.zzn.com` is not classified through `zzn.com` (for every source, ivolo's too).
 * - role: `role-based-email-addresses` (MIT, Mixmax): the whole local part, lower-cased, with its
 *   category (marketing / notification / meeting / other; the first category wins on duplicates).
 *
 * Loading takes ~100 ms and ~15 MB; `emailLists()` does it once per process (call it at boot to
 * keep it off the first request).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** Category of a role local part, as the Mixmax package groups them. */
export type RoleCategory = "marketing" | "notification" | "meeting" | "other";

/** The lists, as lookups. All inputs are lower-case ASCII (A-label) domains or local parts. */
export interface EmailLists {
  /** Whether the host or one of its parent domains (>= 2 labels) is a disposable-mail domain. */
  isDisposable(domain: string): boolean;
  /** Whether the host or a parent domain (>= 2 labels) is a free-mail provider (and not disposable). */
  isFree(domain: string): boolean;
  /** The role category of a whole local part (lower-case, +tag removed), or null. */
  roleCategory(localPart: string): RoleCategory | null;
  /** Entry counts, for logs and the docs. */
  readonly counts: { disposable: number; free: number; role: number; excludedSuffixes: number };
}

/** Raw list contents; `buildEmailLists` turns them into lookups (tests pass small ones). */
export interface EmailListSources {
  disposable: Iterable<string>;
  free: Iterable<string>;
  /** Suffixes such as ".ddns.org": never matched as a parent domain (exact entries still count). */
  excludedSuffixes: Iterable<string>;
  roles: Partial<Record<RoleCategory, Iterable<string>>>;
}

const ROLE_ORDER: readonly RoleCategory[] = ["marketing", "notification", "meeting", "other"];

/**
 * Builds the lookups from raw lists (lower-cased, trimmed, blanks dropped).
 * @example buildEmailLists({ disposable: ["mailinator.com"], free: ["gmail.com"], excludedSuffixes: [], roles: { other: ["info"] } })
 */
export function buildEmailLists(src: EmailListSources): EmailLists {
  const excluded: ReadonlySet<string> = new Set([...clean(src.excludedSuffixes)].map((s) => s.replace(/^\.+/, "")));
  const disposable = new Set(clean(src.disposable));
  const free = new Set([...clean(src.free)].filter((d) => !disposable.has(d)));
  const roles = new Map<string, RoleCategory>();
  for (const cat of ROLE_ORDER) for (const r of clean(src.roles[cat] ?? [])) if (!roles.has(r)) roles.set(r, cat);
  return {
    isDisposable: (domain) => matchesSelfOrParent(disposable, excluded, domain),
    isFree: (domain) => !matchesSelfOrParent(disposable, excluded, domain) && matchesSelfOrParent(free, excluded, domain),
    roleCategory: (local) => roles.get(local) ?? null,
    counts: { disposable: disposable.size, free: free.size, role: roles.size, excludedSuffixes: excluded.size },
  };
}

/**
 * Parents that never match for their subdomains: public suffixes under which unrelated people
 * register names. The disposable list carries a few as entries of their own (`edu.pl`, `web.id`,
 * `my.id`, `za.com`, `net.ee`, `biz.st`, `biz.tm`, `info.tm`): the entry then marks that exact host
 * only. Generic second-level labels under a two-letter country code (`co.uk`, `com.br`, `ac.jp`)
 * are caught by the pattern, so a future entry of that kind is handled too. Dynamic-DNS parents
 * (`ddns.net`, `dynv6.net`, `cloudns.asia`, ...) are deliberately NOT here: throw-away hosts on
 * them are what the parent match is for.
 */
const GENERIC_SLD = /^(?:ac|biz|co|com|edu|firm|gen|go|gob|gov|in|info|int|ltd|me|mil|my|ne|net|nic|nom|or|org|plc|sch|web)\.[a-z]{2}$/;
const PUBLIC_SUFFIX_ENTRIES: ReadonlySet<string> = new Set(["za.com", "eu.org", "us.com", "uk.com", "gb.net"]);

function isPublicSuffixLike(parent: string): boolean {
  return GENERIC_SLD.test(parent) || PUBLIC_SUFFIX_ENTRIES.has(parent);
}

/**
 * The host, then each parent down to two labels (`a.b.c.com`, `b.c.com`, `c.com`), skipping
 * parents that are public suffixes (see isPublicSuffixLike) or excluded suffixes.
 */
function matchesSelfOrParent(set: ReadonlySet<string>, excluded: ReadonlySet<string>, domain: string): boolean {
  if (set.has(domain)) return true;
  let i = domain.indexOf(".");
  // Stop when the rest has no dot left: a bare TLD is never an entry.
  while (i >= 0) {
    const rest = domain.slice(i + 1);
    if (rest.indexOf(".") < 0) return false;
    if (set.has(rest) && !excluded.has(rest) && !isPublicSuffixLike(rest)) return true;
    i = domain.indexOf(".", i + 1);
  }
  return false;
}

function* clean(values: Iterable<string>): Iterable<string> {
  for (const v of values) {
    const t = v.trim().toLowerCase();
    if (t.length > 0 && !t.startsWith("#")) yield t;
  }
}

const require = createRequire(import.meta.url);

/** The package lists, read from node_modules (see the module comment for sources and licences). */
export function readPackageEmailLists(): EmailListSources {
  const lines = (path: string): string[] => readFileSync(require.resolve(path), "utf8").split("\n");
  const roles = require("role-based-email-addresses") as string[] & Record<"MARKETING" | "NOTIFICATION" | "MEETING" | "OTHER", string[]>;
  return {
    disposable: [
      ...lines("freemail/data/disposable.txt"),
      ...(require("disposable-email-domains") as string[]),
      ...(require("disposable-email-domains/wildcard.json") as string[]),
    ],
    free: lines("freemail/data/free.txt"),
    excludedSuffixes: lines("freemail/data/blacklist.txt"),
    roles: { marketing: roles.MARKETING, notification: roles.NOTIFICATION, meeting: roles.MEETING, other: roles.OTHER },
  };
}

let loaded: EmailLists | undefined;

/** The process-wide lists from the npm packages, built on first call. */
export function emailLists(): EmailLists {
  loaded ??= buildEmailLists(readPackageEmailLists());
  return loaded;
}
