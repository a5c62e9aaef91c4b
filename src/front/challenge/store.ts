import { randomBytes } from "node:crypto";
import { ApiError } from "../../shared/errors.js";
import type { StoreClient } from "../../store/front/client.js";
import type { SecretName } from "../../store/protocol.js";
import type { SpendChallenge } from "./service.js";

/** Meta key of the per-install challenge secret. */
export const CHALLENGE_SECRET_KEY = "challenge_secret" satisfies SecretName;

/**
 * The install's challenge secret: created (32 random bytes, hex) by the writer on first start
 * and read back on every later one, so challenges issued before a restart still verify.
 * @throws Error when the writer cannot store or read it (boot should stop).
 */
export async function ensureChallengeSecret(store: Pick<StoreClient, "send">): Promise<string> {
  const ack = await store.send({ op: "secret.ensure", name: CHALLENGE_SECRET_KEY, value: randomBytes(32).toString("hex") });
  if (!ack.ok) throw new Error(`challenge secret: ${ack.message}`);
  return ack.value;
}

/**
 * Spends challenges through the single writer (`challenge.spend`). The ack comes after the
 * writer's commit, so a spend survives a restart; the writer handles intents one at a time, so
 * the first of two concurrent spends wins.
 * @throws ApiError NOT_READY when the writer does not record it (stopped, storage failure).
 */
export function storeSpender(store: Pick<StoreClient, "send">): SpendChallenge {
  return async (id, expiresAt) => {
    const ack = await store.send({ op: "challenge.spend", id, expiresAt });
    if (!ack.ok) throw new ApiError("NOT_READY", "Cannot record the challenge as used right now; nothing was charged. Retry shortly.");
    return ack.created;
  };
}
