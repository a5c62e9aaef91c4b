import type { Logger } from "../../shared/log.js";
import type { StoreClient } from "../../store/front/client.js";
import type { OverageClaim } from "../../store/records.js";
import type { BillingSetup } from "./stripe.js";

/**
 * Reports credits past a paid plan's quota to Stripe's billing meter, in batches, with a durable
 * cursor kept by the writer (per org and period: `reported`, and the `pending` report).
 *
 * Each tick: the writer claims reports (a pending one is returned unchanged; a new one covers
 * `reported`..`overage` and is stored before anything is sent), each is sent as one meter event
 * whose `identifier` names exactly that range, and only Stripe's acknowledgement moves `reported`.
 * A crash or restart between sending and recording resends the same event, which Stripe
 * deduplicates by identifier; a Stripe error or timeout leaves it pending for the next tick.
 * Overage is therefore never lost and never reported twice.
 */
export class OverageReporter {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: StoreClient,
    private readonly setup: BillingSetup,
    private readonly log: Logger,
    private readonly flushLedger: () => void,
    private readonly intervalMs: number,
    /** In a cluster, only the node this says leads reports (pg/leader.ts); alone, always. */
    private readonly leads: () => boolean = () => true,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a tick in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One reporting round (also callable directly). Never throws. */
  tick(): Promise<void> {
    if (!this.running) this.running = this.round().finally(() => (this.running = null));
    return this.running;
  }

  private async round(): Promise<void> {
    if (!this.leads()) return;
    try {
      this.flushLedger(); // debits answered so far reach the ledger before it is read
      const ack = await this.store.send({ op: "overage.claim", nowMs: Date.now() });
      if (!ack.ok) return this.log.warn("overage claim failed", { message: ack.message });
      for (const claim of ack.claims) await this.report(claim);
    } catch (err) {
      this.log.error("overage reporting failed", { err: err instanceof Error ? err.message : String(err) });
    }
  }

  private async report(c: OverageClaim): Promise<void> {
    if (c.timestamp < 0) {
      this.log.error("overage could not be reported in time and is unbillable", { org_id: c.orgId, period: c.period, credits: c.to - c.from });
      return;
    }
    try {
      await this.setup.stripe.billing.meterEvents.create({
        event_name: this.setup.meterEventName,
        identifier: c.identifier,
        timestamp: Math.floor(c.timestamp / 1000),
        payload: { stripe_customer_id: c.customerId, value: String(c.to - c.from) },
      });
    } catch (err) {
      const e = err as { code?: string; statusCode?: number; message?: string };
      // Already received (a resend after a crash): Stripe has it, so it counts as acknowledged.
      if (e.code !== "resource_already_exists") {
        this.log.warn("overage report not acknowledged; retried next round", { org_id: c.orgId, period: c.period, identifier: c.identifier, status: e.statusCode, message: e.message });
        return;
      }
    }
    const ack = await this.store.send({ op: "overage.reported", orgId: c.orgId, period: c.period, identifier: c.identifier });
    if (!ack.ok) this.log.warn("overage acknowledgement not recorded; resent next round", { identifier: c.identifier });
    else this.log.info("overage reported", { org_id: c.orgId, period: c.period, credits: c.to - c.from, identifier: c.identifier });
  }
}
