import type { Logger } from "../../shared/log.js";
import type { WebhookSettings } from "../protocol.js";
import { sendWebhook } from "./webhook-send.js";
import type { WebhookClaim, WebhookStore } from "./webhooks.js";

/**
 * Sends the outbox's due entries (writer/webhooks.ts) on the writer thread's event loop: claims
 * are taken and results recorded in short transactions of their own, between the writer's
 * commits, and the HTTP requests run asynchronously (webhook-send.ts: public addresses only
 * unless FS_WEBHOOK_ALLOW_PRIVATE, each bounded by FS_WEBHOOK_TIMEOUT_MS, at most
 * FS_WEBHOOK_CONCURRENCY at once). A slow or dead receiver holds one of those slots until its
 * timeout and nothing else: the writer's commits and the API go on.
 * See docs/architecture.md, "Outbound webhooks".
 */
export class WebhookDeliverer {
  private inFlight = 0;
  private wake: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  private stopped = false;
  private readonly poll: NodeJS.Timeout;

  /**
   * @param transact runs its action in one write transaction of the store (and resets what the
   *   writer caches when it fails); throws when the transaction failed.
   */
  constructor(
    private readonly store: WebhookStore,
    private readonly settings: WebhookSettings,
    private readonly transact: <T>(action: () => T) => T,
    private readonly log: Logger,
  ) {
    // Other nodes of a cluster write entries too, and claims of a dead node expire: look now and then.
    this.poll = setInterval(() => this.run(), settings.pollMs);
    this.poll.unref();
  }

  /** Looks for due entries after the current event-loop turn (a commit wrote some). */
  kick(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.poll);
    if (this.wake) clearTimeout(this.wake);
  }

  private schedule(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (this.stopped || at >= this.wakeAt) return;
    if (this.wake) clearTimeout(this.wake);
    this.wakeAt = at;
    this.wake = setTimeout(() => {
      this.wake = null;
      this.wakeAt = Infinity;
      this.run();
    }, delayMs);
    this.wake.unref();
  }

  private run(): void {
    if (this.stopped) return;
    const free = this.settings.concurrency - this.inFlight;
    if (free <= 0) return;
    let claims: WebhookClaim[];
    let next: number | null;
    try {
      [claims, next] = this.transact(() => {
        const taken = this.store.claim(Date.now(), free);
        return [taken, this.store.nextDue()] as const;
      });
    } catch (err) {
      // On PostgreSQL another node claimed the same entries first, or the database is away.
      this.log.debug("webhook claim deferred", { reason: (err as Error).message });
      return;
    }
    for (const c of claims) void this.deliver(c);
    // The next due entry (a retry's time, or a claim's expiry) wakes the deliverer; while every
    // slot is busy, a finished delivery does.
    if (next !== null && claims.length < free) this.schedule(Math.max(0, next - Date.now()));
  }

  private async deliver(claim: WebhookClaim): Promise<void> {
    this.inFlight++;
    const result = await sendWebhook(claim, this.settings);
    this.inFlight--;
    try {
      const outcome = this.transact(() => this.store.settle(claim, result, Date.now()));
      if (outcome === "failed")
        this.log.warn("webhook given up", { endpoint: claim.endpoint.id, msg_id: claim.entry.msg_id, status: result.status, error: result.error });
    } catch (err) {
      // Not recorded: the claim expires and the entry is sent again, with the same webhook-id.
      this.log.warn("webhook attempt not recorded", { endpoint: claim.endpoint.id, reason: (err as Error).message });
    }
    this.kick();
  }
}
