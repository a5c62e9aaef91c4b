import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `n` characters of base62 from a CSPRNG (rejection sampling keeps it unbiased). */
export function randomBase62(n: number): string {
  let out = "";
  while (out.length < n) {
    const bytes = randomBytes(n * 2);
    for (let i = 0; i < bytes.length && out.length < n; i++) {
      const b = bytes[i]!;
      if (b < 248) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** A prefixed opaque id, e.g. `org_3fK9...`; `we`: a webhook endpoint. */
export function newId(prefix: "org" | "prj" | "key" | "we"): string {
  return `${prefix}_${randomBase62(16)}`;
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes (outbound webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** Per-process random part of `sequentialId`: unique across restarts without a random draw per id. */
const PROCESS_PREFIX = randomBase62(10);
let sequence = 0;

/**
 * A prefixed id unique across processes and restarts, cheaper than `newId` on hot paths (no
 * CSPRNG call): a random per-process part and a counter, e.g. `obs_Xk3...9a1f`. Not a secret.
 */
export function sequentialId(prefix: "obs"): string {
  return `${prefix}_${PROCESS_PREFIX}${(sequence++).toString(36)}`;
}
