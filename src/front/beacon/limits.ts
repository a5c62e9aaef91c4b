/**
 * Rate limits on the beacon's writes (POST /v1/handshake, /v1/collect, /v1/report): per client
 * address and per project, checked before the body is read (docs/operations.md, "Beacon writes
 * and observation storage"). A publishable key is public, so without them one client could
 * record as fast as it can send, and fill the disk.
 */
import type { ParsedIp } from "../../shared/ip.js";
import { RateTable, tableRefusal } from "../admission/rate-table.js";
import type { ApiError } from "../../shared/errors.js";

/** The window of both limits, in seconds (the RateLimit-Policy's `w`). */
export const BEACON_WINDOW_SECONDS = 60;

/**
 * Most addresses and projects each table keeps (a few MB); past it the one added longest ago is
 * forgotten, so many addresses cannot grow the limiter itself.
 */
export const BEACON_LIMITER_KEYS = 100_000;

/** Beacon writes allowed per BEACON_WINDOW_SECONDS; 0 turns a limit off. */
export interface BeaconLimitSettings {
  perAddress: number;
  perProject: number;
}

type Scope = "address" | "project";

/**
 * The two limits of one front thread. A write counts against both or neither: one refused by
 * its project's limit does not use up its address's, and the other way round.
 */
export class BeaconRateLimits {
  private readonly addresses: RateTable<number | string> | null;
  private readonly projects: RateTable<string> | null;
  /** Writes refused since start, per limit (GET /metrics). */
  readonly refused: Record<Scope, number> = { address: 0, project: 0 };

  constructor(settings: BeaconLimitSettings, maxKeys = BEACON_LIMITER_KEYS) {
    this.addresses = settings.perAddress > 0 ? new RateTable(settings.perAddress, BEACON_WINDOW_SECONDS, maxKeys) : null;
    this.projects = settings.perProject > 0 ? new RateTable(settings.perProject, BEACON_WINDOW_SECONDS, maxKeys) : null;
  }

  /**
   * Counts one write of `projectId` from `ip` at `nowMs`.
   * @throws ApiError RATE_LIMITED with Retry-After and the RateLimit fields of the limit reached.
   */
  admit(projectId: string, ip: ParsedIp | null, nowMs: number): void {
    const a = this.addresses;
    const p = this.projects;
    const address = a ? addressKey(ip) : 0;
    const nextA = a ? a.peek(address, nowMs) : 0;
    if (nextA < 0) throw this.refusal("address", a!, address, nowMs);
    const nextP = p ? p.peek(projectId, nowMs) : 0;
    if (nextP < 0) throw this.refusal("project", p!, projectId, nowMs);
    a?.take(address, nextA);
    p?.take(projectId, nextP);
  }

  private refusal<K extends string | number>(scope: Scope, table: RateTable<K>, key: K, nowMs: number): ApiError {
    this.refused[scope]++;
    const who = scope === "address" ? "from this client address" : "for this project";
    return tableRefusal(scope, table, key, nowMs, `Too many beacon calls ${who}`);
  }
}

/**
 * The key an address is limited under: an IPv4 address as its number; an IPv6 address by its
 * /64, the block one host or home is given (one device can use any address in it); an
 * unreadable peer address shares one key.
 */
export function addressKey(ip: ParsedIp | null): number | string {
  if (ip === null) return -1;
  if (ip.version === 4) return ip.v4;
  return `${ip.words[0]!.toString(16)}:${ip.words[1]!.toString(16)}`;
}
