/** When and how long the client waits before trying a call again. */

/** Retry settings of a client. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 = none). */
  maxRetries?: number;
  /** First backoff in milliseconds, doubled per retry, with full jitter (default 250). */
  baseDelayMs?: number;
  /**
   * The longest wait the client accepts (default 30000). A Retry-After longer than this (a quota
   * that resets next month) is not waited for: the error is returned at once.
   */
  maxDelayMs?: number;
  /** How to wait; by default a timer. Tests and custom schedulers may pass their own. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** Statuses worth another attempt: rate limited, overloaded or not ready, and an idempotent request still running. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 503 || status === 409;
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Exponential backoff with full jitter: a random wait in [0, base * 2^retry], at most `max`. */
export function backoffMs(retry: number, base: number, max: number): number {
  return Math.min(max, Math.random() * base * 2 ** retry);
}

/** Waits `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
