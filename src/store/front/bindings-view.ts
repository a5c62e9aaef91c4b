import type { StoreReader } from "../reader.js";
import type { BindingKind } from "../records.js";

/** The join keys of an account event, hashed (src/front/sessions/identifiers.ts). */
export interface PeekKeys {
  user?: string;
  session?: string;
  fingerprint?: string;
  /** The address's canonical text, hashed: ::ffff:1.2.3.4 and 1.2.3.4 are one address. */
  ip?: string;
  /** Its /24 (IPv4) or /48 (IPv6) network, hashed. */
  prefix?: string;
  /** The mailbox (see normalEmail), hashed. */
  email?: string;
}

/** What a resolve of these keys would count, read without binding anything. */
export interface PeekedCounts {
  accounts_sharing_session: number;
  accounts_sharing_fingerprint: number;
  accounts_sharing_ip: number;
  accounts_sharing_prefix: number;
  linked_emails: number;
  /** Whether the account was ever bound (null without an account). */
  known_account: boolean | null;
}

/**
 * Reads the binding index the writer keeps (store/writer/bindings.ts) from the front's read-only
 * view, and answers the counts a resolve of the same keys would answer, without writing: for each
 * identifier, the distinct accounts bound to it other than `user` (all of them without `user`);
 * other emails seen on the session. POST /v1/auth/check uses it, so a pre-flight never binds.
 *
 * A few B-tree lookups, independent of how many bindings exist: at once on LMDB, in three
 * statements over the front's pool on a cluster node (a promise then). It reads what the writer
 * has committed: a resolve answered before this call is included (its ack means committed).
 */
export function peekCounts(reads: StoreReader, orgId: string, k: PeekKeys): PeekedCounts | Promise<PeekedCounts> {
  const asked: Array<[BindingKind, string | undefined, string | undefined]> = [
    ["session", k.session, k.user],
    ["fingerprint", k.fingerprint, k.user],
    ["ip", k.ip, k.user],
    ["prefix", k.prefix, k.user],
    ["session_email", k.session, k.email],
  ];
  const counted: Array<[string, string, string]> = [];
  const members: Array<[string, string, string, string]> = [];
  for (const [kind, value, member] of asked) {
    if (value === undefined) continue;
    counted.push([orgId, kind, value]);
    if (member !== undefined) members.push([orgId, kind, value, member]);
  }
  const account: [string, string] | null = k.user === undefined ? null : [orgId, k.user];
  const answer = (counts: Array<{ count: number } | undefined>, bound: Array<number | undefined>, cluster: unknown): PeekedCounts => {
    const others = (kind: BindingKind): number => {
      const i = counted.findIndex((c) => c[1] === kind);
      if (i < 0) return 0;
      const isMember = bound[members.findIndex((m) => m[1] === kind)] !== undefined;
      return (counts[i]?.count ?? 0) - (isMember ? 1 : 0);
    };
    return {
      accounts_sharing_session: others("session"),
      accounts_sharing_fingerprint: others("fingerprint"),
      accounts_sharing_ip: others("ip"),
      accounts_sharing_prefix: others("prefix"),
      linked_emails: others("session_email"),
      known_account: account === null ? null : cluster !== undefined,
    };
  };
  const local = reads.local;
  if (local) {
    return answer(
      counted.map((c) => local.bindingKeys.get(c)),
      members.map((m) => local.bindings.get(m)),
      account && local.clusters.get(account),
    );
  }
  return Promise.all([reads.getMany("bindingKeys", counted), reads.getMany("bindings", members), account ? reads.get("clusters", account) : undefined]).then(
    ([c, b, cl]) => answer(c, b, cl),
  );
}
