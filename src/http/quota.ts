import { PLAN_RULES } from "../shared/plans.js";
import type { StoreClient } from "../store/client.js";
import type { UsageStanding } from "../store/messages.js";
import { ApiError } from "./errors.js";

/**
 * Charges credits through the single writer and turns refusals into 429 QUOTA_EXCEEDED.
 * Keeps each org's last known standing so a request from an org already out of quota is refused
 * before any work; the writer's check stays the only exact one.
 */
export class QuotaGate {
  private readonly standing = new Map<string, UsageStanding>();

  constructor(private readonly store: StoreClient) {}

  /** Throws 429 when the org is known to have no room for `credits` in the current period. */
  precheck(orgId: string, credits: number, nowMs: number): void {
    const s = this.standing.get(orgId);
    if (!s || nowMs >= s.reset || s.quota === null || !isHardStop(s)) return;
    if (s.used + credits > s.quota) throw quotaExceeded(s, nowMs, `Monthly quota of ${s.quota} credits reached for plan ${s.plan}.`);
  }

  /** Debits `credits`; resolves after the writer committed it. */
  async charge(orgId: string, credits: number, nowMs: number, neverBlock: boolean): Promise<UsageStanding> {
    const ack = await this.store.send({ op: "charge", orgId, credits, nowMs, neverBlock });
    if (ack.ok) {
      this.standing.set(orgId, ack.usage!);
      return ack.usage!;
    }
    if (ack.error === "QUOTA_EXCEEDED") {
      this.standing.set(orgId, ack.usage!);
      throw quotaExceeded(ack.usage!, nowMs, ack.message);
    }
    if (ack.error === "NOT_FOUND") throw new ApiError("NOT_FOUND", ack.message);
    throw new Error(`charge failed: ${ack.message}`);
  }

  /** Forget an org's standing after its plan or usage changed outside a charge. */
  forget(orgId: string): void {
    this.standing.delete(orgId);
  }
}

function isHardStop(s: UsageStanding): boolean {
  return PLAN_RULES[s.plan].hardStop;
}

/** SPEC 7 rule 1: 429 with metadata.ratelimit, plus Retry-After. */
function quotaExceeded(s: UsageStanding, nowMs: number, message: string): ApiError {
  const limit = s.quota ?? 0;
  const resetIn = Math.max(0, Math.ceil((s.reset - nowMs) / 1000));
  return new ApiError("QUOTA_EXCEEDED", message, {
    headers: { "retry-after": String(resetIn) },
    metadata: { ratelimit: { limit, remaining: Math.max(0, limit - s.used), reset: s.reset, reset_in_seconds: resetIn } },
  });
}
