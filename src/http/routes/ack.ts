import type { Ack } from "../../store/protocol.js";
import { ApiError } from "../errors.js";

/** Maps a store refusal to the API error a client should see; passes the typed success through. */
export function ackOrThrow<A extends Ack>(ack: A): Extract<A, { ok: true }> {
  if (ack.ok) return ack as Extract<A, { ok: true }>;
  switch (ack.error) {
    case "NOT_FOUND":
      throw new ApiError("NOT_FOUND", ack.message);
    case "CONFLICT":
      throw new ApiError("VALIDATION_ERROR", ack.message);
    case "STORE_FAILED":
      // The writer is gone (stopping) or its transaction failed: nothing was written.
      throw new ApiError("NOT_READY", "The store is not available right now; nothing was changed. Retry shortly.", { headers: { "retry-after": "1" } });
  }
}
