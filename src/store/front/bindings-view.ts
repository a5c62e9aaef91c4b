import type { StateDbs } from "../state-env.js";
import type { BindingKind } from "../writer/bindings.js";

/** The join keys of an account event, hashed (src/http/sessions/identifiers.ts). */
export interface PeekKeys {
  user?: string;
  session?: string;
  fingerprint?: string;
  ip?: string;
  prefix?: string;
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
 * A few B-tree lookups, independent of how many bindings exist. It reads what the writer has
 * committed: a resolve answered before this call is included (its ack means committed).
 */
export function peekCounts(dbs: Pick<StateDbs, "bindings" | "bindingKeys" | "clusters">, orgId: string, k: PeekKeys): PeekedCounts {
  const others = (kind: BindingKind, value: string | undefined, member: string | undefined): number => {
    if (value === undefined) return 0;
    const count = dbs.bindingKeys.get([orgId, kind, value])?.count ?? 0;
    const isMember = member !== undefined && dbs.bindings.get([orgId, kind, value, member]) !== undefined;
    return count - (isMember ? 1 : 0);
  };
  return {
    accounts_sharing_session: others("session", k.session, k.user),
    accounts_sharing_fingerprint: others("fingerprint", k.fingerprint, k.user),
    accounts_sharing_ip: others("ip", k.ip, k.user),
    accounts_sharing_prefix: others("prefix", k.prefix, k.user),
    linked_emails: others("session_email", k.session, k.email),
    known_account: k.user === undefined ? null : dbs.clusters.get([orgId, k.user]) !== undefined,
  };
}
