import { ApiError } from "../shared/errors.js";
import { periodOf } from "../shared/period.js";
import type { StoreClient } from "../store/front/client.js";
import type { WebhookBlock } from "../store/protocol.js";

/** Subjects remembered per thread and period before the set starts afresh (the writer's marker still dedupes). */
const MAX_REMEMBERED = 100_000;

/**
 * Block events (session.blocked, account.blocked) from the front thread, where the `block`
 * verdict is made after the store's answer: the writer op `webhook.blocked`, awaited before a
 * block answer goes out, so an answered block has its event on disk. Each (project, subject) is
 * sent once per period from this thread (later hits wait for the same send); the writer dedupes
 * across threads and restarts with a marker, and writes nothing for an org without an endpoint
 * subscribed to the event. Other answers never come here.
 */
export class BlockNotifier {
  private sent = new Map<string, Promise<void>>();
  private period = "";

  constructor(private readonly store: Pick<StoreClient, "send">) {}

  blocked(block: WebhookBlock): Promise<void> {
    const period = periodOf(block.nowMs);
    if (period !== this.period || this.sent.size >= MAX_REMEMBERED) {
      this.sent.clear();
      this.period = period;
    }
    // A test key's subjects are apart from live ones (an account id may be the same in both).
    const key = `${block.projectId ?? ""}\t${block.type}\t${block.livemode ? "" : "test:"}${block.subject}`;
    const known = this.sent.get(key);
    if (known) return known;
    const sending = this.store.send({ op: "webhook.blocked", ...block }).then((ack) => {
      if (!ack.ok) throw new Error(ack.message);
    });
    const done = sending.catch((err: unknown) => {
      this.sent.delete(key);
      throw new ApiError("NOT_READY", `The block event could not be stored right now (${err instanceof Error ? err.message : String(err)}); retry shortly.`, {
        headers: { "retry-after": "1" },
      });
    });
    this.sent.set(key, done);
    return done;
  }
}
