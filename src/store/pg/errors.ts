/** A statement PostgreSQL refused, or a connection that failed; `code` is the SQLSTATE, or "CONNECTION" / "TIMEOUT" when there is none. */
export class PgError extends Error {
  /**
   * @param unknown the request was in flight when its connection was lost or its deadline passed:
   *   what it did is not known (a COMMIT in it may have committed). The connection was destroyed.
   */
  constructor(
    readonly code: string,
    message: string,
    readonly unknown = false,
  ) {
    super(message);
    this.name = "PgError";
  }

  /** The transaction lost a race with another node's (serialization failure, deadlock): run it again. */
  get retryable(): boolean {
    return this.code === "40001" || this.code === "40P01";
  }

  /** PostgreSQL could not be reached or did not answer in time. */
  get unavailable(): boolean {
    return this.code === "CONNECTION" || this.code === "TIMEOUT" || this.code === "57014" || /^08|^57P/.test(this.code);
  }
}

/** `err` as a PgError: PostgreSQL's own errors keep their SQLSTATE, anything else is the connection failing. */
export function asPgError(err: unknown, unknown: boolean): PgError {
  if (err instanceof PgError) return err;
  const e = err as { code?: string; message?: string };
  // PostgreSQL's errors carry a five-character SQLSTATE; anything else (ECONNREFUSED while the
  // server is down, ECONNRESET, a client without a code) is the connection failing.
  const sqlState = e?.code !== undefined && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
  return new PgError(sqlState ?? "CONNECTION", e?.message ?? String(err), sqlState === undefined && unknown);
}
