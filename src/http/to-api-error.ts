import { PgError } from "../store/pg/errors.js";
import { StoreWait } from "../store/store-wait.js";
import { ApiError } from "../shared/errors.js";

/**
 * The central three-tier mapping: our errors as they are; anything else becomes a generic
 * 500 whose message reveals nothing (the caller logs the original with the request id).
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // A cluster's shared store (FS_STORE=postgres) could not be read or written in time.
  // Or a record it needed was not at hand where the call could not wait for it (it is on its way).
  if ((err instanceof PgError && (err.unavailable || err.retryable)) || err instanceof StoreWait) {
    return new ApiError("NOT_READY", "The shared store (PostgreSQL) is unavailable right now; nothing was charged. Retry shortly.", {
      headers: { "retry-after": "1" },
    });
  }
  return new ApiError("INTERNAL_ERROR", "Internal server error.");
}
