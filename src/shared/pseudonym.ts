import { createHash } from "node:crypto";

/**
 * Keyed hashes of identifiers (user ids, session ids, fingerprints, IPs, emails) so the store
 * never holds them raw: SHA-256 over a per-install secret, the kind and the value, cut to 128
 * bits (base64url, 22 characters). Equal inputs give equal hashes within one installation; the
 * secret makes a stored hash useless for looking up a known identifier elsewhere.
 */
export class Pseudonymizer {
  constructor(private readonly secret: string) {}

  hash(kind: string, value: string): string {
    return createHash("sha256").update(this.secret).update("\u0000").update(kind).update("\u0000").update(value).digest("base64url").slice(0, 22);
  }
}
