import { availableParallelism, loadavg } from "node:os";

/**
 * How many times slower than a quiet machine this one is expected to be, for the timeouts that
 * only bound a hang (never for what a test asserts): the 1-minute load average per core when the
 * run starts, between 1 and 4, times FS_TEST_TIME_SCALE when set (a slow CI runner). A loaded
 * 2-core machine took twice a quiet one's time to start a server with four front threads.
 */
export function timeScale(): number {
  const load = Math.min(4, Math.max(1, loadavg()[0]! / availableParallelism()));
  const extra = Number(process.env.FS_TEST_TIME_SCALE ?? "1");
  return load * (Number.isFinite(extra) && extra > 0 ? extra : 1);
}

/** `ms` scaled by timeScale(), for a timeout that bounds a hang. */
export function scaled(ms: number): number {
  return Math.round(ms * timeScale());
}
