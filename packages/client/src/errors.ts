import type { ClientErrorCode, ServiceErrorCode } from "./types.js";

/**
 * A call that produced no result: the service's error envelope (`code`, `message`, HTTP `status`,
 * `requestId`), or a failure before any answer (`status` 0 and a ClientErrorCode).
 */
export class FraudscoreError extends Error {
  override readonly name = "FraudscoreError";
  /** The envelope's error code, or a ClientErrorCode when no answer came. */
  readonly code: ServiceErrorCode | ClientErrorCode;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The answer's request id (metadata.request_id or X-Request-Id); null when no answer came. */
  readonly requestId: string | null;
  /** Milliseconds the service asked to wait (Retry-After), if it did. */
  readonly retryAfterMs: number | null;
  /** Attempts made, retries included. */
  readonly attempts: number;

  constructor(fields: { code: ServiceErrorCode | ClientErrorCode; message: string; status: number; requestId: string | null; retryAfterMs: number | null; attempts: number; cause?: unknown }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.retryAfterMs = fields.retryAfterMs;
    this.attempts = fields.attempts;
  }
}
