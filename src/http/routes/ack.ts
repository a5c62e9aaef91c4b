import type { Ack } from "../../store/protocol.js";
import { ApiError } from "../../shared/errors.js";

/** RouteResult.recorded of a handler whose intent carried its Idempotency-Key answer: the writer committed both. */
export const COMMITTED = { seq: null } as const;

/**
 * Maps a store refusal to the API error a client should see; passes the typed success through.
 * `param`: the input a refusal of the writer's (CONFLICT, found against the stored state) is about,
 * named in the VALIDATION_ERROR as a schema's problem is (`path.keyId: ...`).
 */
export function ackOrThrow<A extends Ack>(ack: A, param?: string): Extract<A, { ok: true }> {
  if (ack.ok) return ack as Extract<A, { ok: true }>;
  switch (ack.error) {
    case "NOT_FOUND":
      throw new ApiError("NOT_FOUND", ack.message);
    case "CONFLICT":
      throw new ApiError("VALIDATION_ERROR", param === undefined ? ack.message : `${param}: ${ack.message}.`);
    case "LIMIT":
      // The org is at one of its caps (the writer counted in the transaction that would have created it).
      throw new ApiError("LIMIT_EXCEEDED", ack.message);
    case "ANSWERED":
      // Another thread or node committed an answer for this Idempotency-Key first: nothing was
      // written; the retry gets that answer (or 422 if it was for another request).
      throw new ApiError("IDEMPOTENCY_KEY_IN_USE", `${ack.message}; retry with the same key to get its answer.`);
    case "STORE_FAILED":
      // The writer is gone (stopping) or its transaction failed: nothing was written.
      throw new ApiError("NOT_READY", "The store is not available right now; nothing was changed. Retry shortly.", { headers: { "retry-after": "1" } });
  }
}
