import { createHash } from "node:crypto";

/** Most recent identifiers whose hashes are kept (repeat logins, sessions and IPs repeat). */
const MEMO_MAX = 100_000;

/**
 * Keyed hashes of identifiers (user ids, session ids, fingerprints, IPs, emails) so the store
 * never holds them raw: SHA-256 over a per-install secret, the kind and the value, cut to 128
 * bits (base64url, 22 characters). Equal inputs give equal hashes within one installation; the
 * secret makes a stored hash useless for looking up a known identifier elsewhere. A resolve hashes
 * up to six identifiers (~1.5 µs each), so recent ones are memoised in memory (never stored).
 */
export class Pseudonymizer {
  /** One memo per kind, so a lookup hashes only the value (a string fresh from the body), not a key joined for it. */
  private memos = new Map<string, Map<string, string>>();
  private size = 0;

  constructor(private readonly secret: string) {}

  hash(kind: string, value: string): string {
    let memo = this.memos.get(kind);
    if (memo === undefined) {
      memo = new Map();
      this.memos.set(kind, memo);
    }
    const known = memo.get(value);
    if (known !== undefined) return known;
    const h = createHash("sha256").update(this.secret).update("\u0000").update(`${kind}\u0000${value}`).digest("base64url").slice(0, 22);
    if (this.size >= MEMO_MAX) {
      this.memos = new Map([[kind, (memo = new Map())]]);
      this.size = 0;
    }
    memo.set(value, h);
    this.size++;
    return h;
  }
}
