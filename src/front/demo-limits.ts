/**
 * Per-client limits on the demo's routes (FS_DEMO=true): anyone may call them without a key, and
 * POST /demo/submit runs a full form check (content model on the pool, MX lookup) for the demo
 * org, while GET /demo and GET /demo/observations read the demo project's observations. Keyed by
 * client address as the beacon's limits are (beacon/limits.ts addressKey: an IPv6 address by its
 * /64, X-Forwarded-For only from a trusted proxy), checked before a body is read, per front
 * thread (docs/operations.md, "Limits and abuse").
 */
import type { ParsedIp } from "../shared/ip.js";
import { RateTable, tableRefusal } from "./admission/rate-table.js";
import { addressKey, BEACON_LIMITER_KEYS } from "./beacon/limits.js";

/** The window of both limits, in seconds (the RateLimit-Policy's `w`). */
export const DEMO_WINDOW_SECONDS = 60;

/** Demo requests allowed per client address and DEMO_WINDOW_SECONDS; 0 turns a limit off. */
export interface DemoLimitSettings {
  /** POST /demo/submit (FS_DEMO_SUBMIT_LIMIT). */
  submits: number;
  /** GET /demo and GET /demo/observations together (FS_DEMO_READ_LIMIT). */
  reads: number;
}

export type DemoCall = "submit" | "read";

export class DemoLimits {
  private readonly tables: Record<DemoCall, RateTable<number | string> | null>;
  /** Requests refused since start, per limit. */
  readonly refused: Record<DemoCall, number> = { submit: 0, read: 0 };

  constructor(settings: DemoLimitSettings, maxKeys = BEACON_LIMITER_KEYS) {
    const table = (limit: number) => (limit > 0 ? new RateTable<number | string>(limit, DEMO_WINDOW_SECONDS, maxKeys) : null);
    this.tables = { submit: table(settings.submits), read: table(settings.reads) };
  }

  /**
   * Counts one `call` from `ip` at `nowMs`.
   * @throws ApiError RATE_LIMITED with Retry-After and the RateLimit fields past the limit.
   */
  admit(call: DemoCall, ip: ParsedIp | null, nowMs: number): void {
    const t = this.tables[call];
    if (!t) return;
    const key = addressKey(ip);
    const next = t.peek(key, nowMs);
    if (next >= 0) return t.take(key, next);
    this.refused[call]++;
    const policy = call === "submit" ? "submit" : "demo";
    const what = call === "submit" ? "demo submissions" : "demo page requests";
    throw tableRefusal(policy, t, key, nowMs, `Too many ${what} from this client address`);
  }
}
