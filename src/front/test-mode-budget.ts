/**
 * The per-org budget of test-mode keys (docs/api.md, "Test mode"; docs/operations.md, "Test-mode
 * keys"). A test key charges nothing and touches no quota, so without a bound of its own it would
 * be free production: its calls of the metered routes are counted here instead, as Stripe counts
 * test-mode requests apart from live ones.
 *
 * - A rate per org: `perSecond` calls a second, as many at once (a token bucket, RateTable), per
 *   front thread.
 * - A count per org and UTC day: `perDay` calls, in the admission table (ObservationBudget's count
 *   under its own prefix), shared by the front threads, so per process; counted in memory, so a
 *   restart starts the day's count again.
 * - Outbound DNS (MX of an e-mail's domain, reverse DNS of an address): `dnsPerMinute` lookups an
 *   org's test calls may send to DNS a minute, as many at once, per front thread; past it a lookup
 *   is answered from the cache, or skipped (`test_budget`) when the cache has nothing.
 *
 * Checked by the router (router.ts run()) before the handler runs, on the test-key branch only:
 * a live key's call never reaches this file. Each setting at 0 turns its bound off.
 */
import type { QueryBudget } from "../datasets/lookup-cache.js";
import type { KeyPrincipal } from "./auth.js";
import { RateTable, rateLimited, tableRefusal } from "./admission/rate-table.js";
import type { QuotaCells } from "./admission/cells.js";
import { ObservationBudget } from "./beacon/budget.js";

const DAY_MS = 86_400_000;
/** Most orgs each rate table keeps; past it the one added longest ago is forgotten. */
const MAX_ORGS = 100_000;

export interface TestModeSettings {
  /** FS_TEST_MODE_PER_SECOND. */
  perSecond: number;
  /** FS_TEST_MODE_PER_DAY. */
  perDay: number;
  /** FS_TEST_MODE_DNS_PER_MINUTE. */
  dnsPerMinute: number;
}

export class TestModeBudget {
  private readonly rate: RateTable<string> | null;
  private readonly day: ObservationBudget | null;
  private readonly dnsTable: RateTable<string> | null;
  /** Test calls refused since start, per bound, and DNS lookups skipped (GET /metrics, fs_test_mode_refused_total). */
  readonly refused = { second: 0, day: 0, dns: 0 };

  constructor(
    cells: QuotaCells,
    private readonly settings: TestModeSettings,
  ) {
    this.rate = settings.perSecond > 0 ? new RateTable(settings.perSecond, 1, MAX_ORGS) : null;
    this.day = settings.perDay > 0 ? new ObservationBudget(cells, settings.perDay, "testcalls:") : null;
    this.dnsTable = settings.dnsPerMinute > 0 ? new RateTable(settings.dnsPerMinute, 60, MAX_ORGS) : null;
  }

  /**
   * Counts one test-key call of a metered route, against both bounds or neither (a call refused
   * for the second does not use up the day).
   * @throws ApiError RATE_LIMITED with Retry-After and the RateLimit fields of the bound reached.
   */
  admit(orgId: string, nowMs: number): void {
    const r = this.rate;
    const next = r ? r.peek(orgId, nowMs) : 0;
    if (next < 0) {
      this.refused.second++;
      throw tableRefusal("test", r!, orgId, nowMs, "Too many test-mode calls for this org");
    }
    if (this.day && !this.day.take(orgId, nowMs)) {
      this.refused.day++;
      const wait = Math.max(1, Math.ceil((Math.floor(nowMs / DAY_MS + 1) * DAY_MS - nowMs) / 1000));
      const perDay = this.settings.perDay;
      throw rateLimited(
        "test-daily",
        perDay,
        86_400,
        wait,
        `This org's test-mode keys made their ${perDay} calls of the UTC day. Retry after ${wait} s (midnight UTC).`,
      );
    }
    r?.take(orgId, next);
  }

  /**
   * The DNS budget of one test call of `orgId` (MxResolver / RdnsResolver lookup): each lookup the
   * cache cannot answer takes one; undefined when DNS is not bounded.
   */
  /** dns() for a test-mode key's call; undefined for any other caller (no budget). */
  dnsOf(principal: KeyPrincipal | null, nowMs: number): QueryBudget | undefined {
    return principal !== null && principal.key.mode === "test" ? this.dns(principal.orgId, nowMs) : undefined;
  }

  dns(orgId: string, nowMs: number): QueryBudget | undefined {
    const t = this.dnsTable;
    if (!t) return undefined;
    return () => {
      const next = t.peek(orgId, nowMs);
      if (next < 0) {
        this.refused.dns++;
        return false;
      }
      t.take(orgId, next);
      return true;
    };
  }
}
