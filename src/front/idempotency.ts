import { createHash } from "node:crypto";
import type { HttpRequest } from "uWebSockets.js";
import { periodOf } from "../shared/period.js";
import type { ChargeJournal } from "../store/charge-journal.js";
import { IDEMPOTENCY_TTL_MS, type StoredAnswer } from "../store/records.js";
import type { StateDbs } from "../store/state-env.js";
import { ApiError } from "../shared/errors.js";
import type { ClaimTable } from "./admission/claims.js";
import type { Route } from "../http/route.js";

/**
 * Idempotency-Key on POST endpoints (docs/api.md, "Idempotent requests"), as Stripe does it: the
 * first successful answer to a key is stored and every retry with the same key and the same
 * request within 24 hours gets that answer again, with nothing run or charged a second time.
 *
 * Durable through the charge journal: the answer is written in the same journal line as its debit
 * (0 credits for an answer that charged nothing) before it is sent, so after kill -9 the replay
 * puts both in the store or neither. Answers are looked up here first (written on this process,
 * not yet applied by the writer), then in the store (LMDB; on a cluster node PostgreSQL, read over
 * the front's pool while the router waits: the lookup throws StoreWait before anything is claimed).
 */
/** POST routes called with a secret key or the admin token take an Idempotency-Key. */
export function isIdempotent(route: Pick<Route<any>, "method" | "auth">): boolean {
  return route.method === "post" && (route.auth.kind === "secret" || route.auth.kind === "admin");
}

export type Claim = { kind: "replay"; answer: StoredAnswer } | { kind: "claimed"; scope: string; key: string; fingerprint: string };

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Stands for an Idempotency-Key header that was sent with nothing uWS lets through (see
 * keyHeaderSent); fails KEY like any malformed key.
 */
export const BLANK_KEY = " ";

/**
 * uWS removes a header value's leading and trailing bytes at or below 0x20 and at or above 0x80
 * before JavaScript sees it, and answers "" alike for an absent header and for one sent with
 * only such bytes (`ключ` arrives as ""; `ключ-3` as `-3`, which no API can tell from a key sent
 * as `-3`). Whether the header was sent at all shows only by walking every header of the
 * request (a native call each): a request with a body is walked anyway (request.ts, for its
 * Content-Length lines), which tells; an admin POST without a body asks here.
 */
export function keyHeaderSent(req: HttpRequest): boolean {
  let sent = false;
  req.forEach((name) => {
    if (name === "idempotency-key") sent = true;
  });
  return sent;
}

export class IdempotencyKeys {
  /** Keys with a request running now: scope \0 key -> fingerprint. */
  private readonly running = new Map<string, string>();
  /** Answers journaled by this thread that the writer may not have applied yet, oldest first. */
  private readonly recent = new Map<string, { answer: StoredAnswer; seq: number }>();
  /** Keys this thread claimed in the shared table (several front threads), until their answer is applied. */
  private readonly shared = new Set<string>();

  /**
   * @param claims with several front threads, the keys running on any of them (ClaimTable): a
   *   key stays claimed there until its answer is in the store, where every thread finds it.
   */
  constructor(
    /** LMDB's view, or on a cluster node the records read over the pool (a lookup may throw StoreWait). */
    private readonly dbs: { idempotency: Pick<StateDbs["idempotency"], "get"> },
    private readonly journal: ChargeJournal,
    private readonly claims: ClaimTable | null = null,
  ) {}

  /** The request's fingerprint: method, path, query and the body's bytes. */
  static fingerprint(method: string, path: string, query: string, body: Buffer | undefined): string {
    const h = createHash("sha256").update(`${method} ${path}?${query}\n`);
    if (body) h.update(body);
    return h.digest("base64url");
  }

  /**
   * Claims `key` for a request, or finds the answer to replay.
   * @throws ApiError VALIDATION_ERROR for a malformed key, IDEMPOTENCY_KEY_IN_USE while another
   *   request with the key runs, IDEMPOTENCY_KEY_REUSED when the key answered another request
   */
  claim(scope: string, key: string, fingerprint: string, nowMs: number): Claim {
    if (!KEY.test(key)) throw new ApiError("VALIDATION_ERROR", "header.idempotency-key: 1 to 255 printable ASCII characters without spaces.");
    const id = `${scope}\0${key}`;
    const stored = this.lookup(id, scope, key, nowMs);
    if (stored) {
      if (stored.fingerprint !== fingerprint) throw reused(key);
      return { kind: "replay", answer: stored };
    }
    if (this.running.has(id)) throw inUse(key);
    if (this.claims) {
      const taken = this.claims.take(id);
      if (taken === "in-use") throw inUse(key);
      if (taken === "claimed") this.shared.add(id);
    }
    this.running.set(id, fingerprint);
    return { kind: "claimed", scope, key, fingerprint };
  }

  /** The request of a claim ended without a stored answer (an error, or the client left). */
  release(claim: Extract<Claim, { kind: "claimed" }>): void {
    const id = `${claim.scope}\0${claim.key}`;
    this.running.delete(id);
    this.giveShared(id);
  }

  /**
   * The answer of a claim that charged nothing: journals it (0 credits) and calls `onWritten`
   * once it is durable; the answer may be sent then.
   */
  store(answer: StoredAnswer, onWritten: (err?: Error) => void): void {
    const seq = this.journal.append(answer.scope, 0, periodOf(answer.created_ms), (err) => {
      if (!err) this.remember(answer, seq);
      else {
        this.running.delete(`${answer.scope}\0${answer.key}`);
        this.giveShared(`${answer.scope}\0${answer.key}`);
      }
      onWritten(err);
    }, answer);
  }

  /**
   * A claim's answer was made durable with the request's effect (RouteResult.recorded): committed
   * by the writer (`seq` null: in the store now) or journaled as `seq`.
   */
  recorded(answer: StoredAnswer, seq: number | null): void {
    if (seq !== null) return this.remember(answer, seq);
    const id = `${answer.scope}\0${answer.key}`;
    this.running.delete(id);
    this.giveShared(id);
  }

  /** A claim's answer is durable (journaled as `seq`, alone or with its debit). */
  remember(answer: StoredAnswer, seq: number): void {
    const id = `${answer.scope}\0${answer.key}`;
    this.running.delete(id);
    this.recent.set(id, { answer, seq });
  }

  /** The writer applied the charge journal up to `seq`: those answers are in LMDB now. */
  applied(seq: number): void {
    for (const [id, r] of this.recent) {
      if (r.seq > seq) break;
      this.recent.delete(id);
      this.giveShared(id);
    }
  }

  private giveShared(id: string): void {
    if (!this.shared.delete(id)) return;
    this.claims!.give(id);
  }

  private lookup(id: string, scope: string, key: string, nowMs: number): StoredAnswer | undefined {
    const answer = this.recent.get(id)?.answer ?? this.dbs.idempotency.get([scope, key]);
    return answer && answer.created_ms > nowMs - IDEMPOTENCY_TTL_MS ? answer : undefined;
  }
}

function inUse(key: string): ApiError {
  return new ApiError("IDEMPOTENCY_KEY_IN_USE", `A request with Idempotency-Key '${key}' is still being processed; retry once it has been answered.`);
}

function reused(key: string): ApiError {
  return new ApiError("IDEMPOTENCY_KEY_REUSED", `Idempotency-Key '${key}' was used for another request (method, path, query or body differ) in the last 24 hours; use a new key for a new request.`);
}
