import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "./ids.js";

/** Secret keys stay server-side; publishable keys go into the beacon tag (docs/api.md, "Authentication"). */
export type KeyType = "secret" | "publishable";
export const SECRET_PREFIX = "fs_live_";
export const PUBLISHABLE_PREFIX = "fs_pub_live_";

/**
 * Live keys are billed; test keys (`fs_test_…`, `fs_pub_test_…`, as Stripe's) charge nothing,
 * touch no quota and answer with the real scoring plus the magic inputs (scoring/test-mode.ts).
 */
export type KeyMode = "live" | "test";
export const TEST_SECRET_PREFIX = "fs_test_";
export const TEST_PUBLISHABLE_PREFIX = "fs_pub_test_";

/** The prefix of a key of this type and mode. */
export function keyPrefix(type: KeyType, mode: KeyMode): string {
  if (mode === "test") return type === "secret" ? TEST_SECRET_PREFIX : TEST_PUBLISHABLE_PREFIX;
  return type === "secret" ? SECRET_PREFIX : PUBLISHABLE_PREFIX;
}

/** Prefixes by what they say, publishable first: `fs_pub_…` does not start with `fs_live_`, but be explicit. */
const PREFIXES: ReadonlyArray<{ prefix: string; type: KeyType; mode: KeyMode }> = [
  { prefix: PUBLISHABLE_PREFIX, type: "publishable", mode: "live" },
  { prefix: TEST_PUBLISHABLE_PREFIX, type: "publishable", mode: "test" },
  { prefix: SECRET_PREFIX, type: "secret", mode: "live" },
  { prefix: TEST_SECRET_PREFIX, type: "secret", mode: "test" },
];

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
export function generateKey(type: KeyType, mode: KeyMode = "live"): { id: string; plain: string; hash: string } {
  const idPart = randomBase62(ID_LEN);
  const plain = keyPrefix(type, mode) + idPart + randomBase62(SECRET_LEN);
  return { id: `key_${idPart}`, plain, hash: hashKey(plain) };
}

/**
 * What may be kept and shown of a key after it was handed out: its prefix and last 4 characters,
 * e.g. `fs_live_…v2X9` (about 24 of its 190 random bits).
 */
export function redactKey(plain: string): string {
  const prefix = PREFIXES.find((p) => plain.startsWith(p.prefix))?.prefix ?? "";
  return `${prefix}…${plain.slice(-4)}`;
}

/** SHA-256 hex of the whole key. Keys are random and long, so a plain hash is enough (no KDF). */
export function hashKey(plain: string): string {
  return createHash("sha256").update(plain).digest("hex");
}

/** Splits a presented key into type, mode and key id without trusting it. null = not our format. */
export function parseKey(plain: string): { type: KeyType; mode: KeyMode; id: string } | null {
  const kind = PREFIXES.find((p) => plain.startsWith(p.prefix));
  if (!kind) return null;
  const rest = plain.slice(kind.prefix.length);
  if (rest.length !== ID_LEN + SECRET_LEN || !BODY.test(rest)) return null;
  return { type: kind.type, mode: kind.mode, id: `key_${rest.slice(0, ID_LEN)}` };
}

/** Constant-time comparison of two hex digests of equal length. */
export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, "hex");
  const b = Buffer.from(bHex, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
