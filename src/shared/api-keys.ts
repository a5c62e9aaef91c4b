import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "./ids.js";

/** Secret keys stay server-side; publishable keys go into the beacon tag (docs/api.md, "Authentication"). */
export type KeyType = "secret" | "publishable";
export const SECRET_PREFIX = "fs_live_";
export const PUBLISHABLE_PREFIX = "fs_pub_live_";

/** Scopes a secret key may carry. `billing` is the manage-billing capability. */
export const SCOPES = ["sessions", "billing"] as const;
export type Scope = (typeof SCOPES)[number];

const ID_LEN = 12;
const SECRET_LEN = 32;
const BODY = /^[0-9A-Za-z]+$/;

/**
 * A fresh key. The plain text is shown once; only `hash` is stored.
 * Layout: prefix + 12-char public key id + 32-char secret (base62, ~190 bits).
 */
export function generateKey(type: KeyType): { id: string; plain: string; hash: string } {
  const idPart = randomBase62(ID_LEN);
  const plain = (type === "secret" ? SECRET_PREFIX : PUBLISHABLE_PREFIX) + idPart + randomBase62(SECRET_LEN);
  return { id: `key_${idPart}`, plain, hash: hashKey(plain) };
}

/**
 * What may be kept and shown of a key after it was handed out: its prefix and last 4 characters,
 * e.g. `fs_live_…v2X9` (about 24 of its 190 random bits).
 */
export function redactKey(plain: string): string {
  const prefix = plain.startsWith(PUBLISHABLE_PREFIX) ? PUBLISHABLE_PREFIX : plain.startsWith(SECRET_PREFIX) ? SECRET_PREFIX : "";
  return `${prefix}…${plain.slice(-4)}`;
}

/** SHA-256 hex of the whole key. Keys are random and long, so a plain hash is enough (no KDF). */
export function hashKey(plain: string): string {
  return createHash("sha256").update(plain).digest("hex");
}

/**
 * Splits a presented key into type and key id without trusting it. null = not our format.
 * Check the publishable prefix first: `fs_pub_live_` does not start with `fs_live_`, but be explicit.
 */
export function parseKey(plain: string): { type: KeyType; id: string } | null {
  let type: KeyType;
  let rest: string;
  if (plain.startsWith(PUBLISHABLE_PREFIX)) {
    type = "publishable";
    rest = plain.slice(PUBLISHABLE_PREFIX.length);
  } else if (plain.startsWith(SECRET_PREFIX)) {
    type = "secret";
    rest = plain.slice(SECRET_PREFIX.length);
  } else return null;
  if (rest.length !== ID_LEN + SECRET_LEN || !BODY.test(rest)) return null;
  return { type, id: `key_${rest.slice(0, ID_LEN)}` };
}

/** Constant-time comparison of two hex digests of equal length. */
export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, "hex");
  const b = Buffer.from(bHex, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
