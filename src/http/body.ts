import type { HttpResponse } from "uWebSockets.js";
import { addressOwner, networkOwner, type BodyBudget, type BodyLease } from "../front/body-budget.js";
import type { BodyDeadlines, PartialBody } from "../front/body-deadline.js";
import type { TrustedProxies } from "../front/client-address.js";
import { ApiError } from "../shared/errors.js";
import { CONFLICTING_LENGTH } from "./request.js";
import type { ResponseState } from "./respond.js";

/** What reading bodies takes on a front thread: the byte pools, the deadline sweep, who is a proxy. */
export interface BodyIntake {
  budget: BodyBudget;
  deadlines: BodyDeadlines;
  trusted: TrustedProxies;
}

/**
 * Whose body it is, for the pool's shares: an org (or `admin`) on keyed routes; on public ones
 * (and Stripe's webhook, which has a pool of its own) the client and its network, from the peer
 * address (read from the connection when empty) and X-Forwarded-For.
 */
export type BodyOwner = { pool: "keyed"; id: string } | { pool: "public" | "webhook"; peer: string; forwardedFor: string };

/**
 * Reads a request body of at most `limit` bytes. Chunks are copied as they arrive (uWS detaches
 * them after the callback) and count against the owner's pool (body-budget.ts) until the answer
 * is written or the client leaves; a body that does not arrive whole with its headers also counts
 * against its owner's share and is watched by the deadline sweep (body-deadline.ts). Rejects with
 * 413 as soon as the count passes the limit (or the declared length does), with 503 OVERLOADED
 * when the pool or the share is full, and with 408 REQUEST_TIMEOUT when the deadline cuts the
 * body (then `state.close` is set: the answer closes the connection). After a 413 or 503 what the
 * client still sends is dropped as it arrives, never held. The caller must have registered
 * onAborted already, calling `state.lease.release()` when the client leaves. `declaredLength` is
 * request.ts declaredLength's answer: a request whose Content-Length headers differ is refused
 * (400) and its connection closed.
 */
export function readBody(res: HttpResponse, state: ResponseState, limit: number, declaredLength: string, intake: BodyIntake, owner: BodyOwner): Promise<Buffer> {
  if (declaredLength === CONFLICTING_LENGTH) {
    state.close = true; // where this body ends is unknown: nothing after it on the connection can be read
    return Promise.reject(new ApiError("VALIDATION_ERROR", "header.content-length: the request carries several Content-Length headers that differ; send one."));
  }
  if (declaredLength) {
    const n = Number(declaredLength);
    if (Number.isFinite(n) && n > limit) return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const read = new BodyRead(res, state, limit, intake, owner, resolve, reject);
    state.lease = read;
    res.onData((chunk, isLast) => read.onChunk(chunk, isLast));
  });
}

/** One body being read: its chunks, its lease, and its place in the deadline sweep. */
class BodyRead implements PartialBody {
  readonly startedAt: number;
  received = 0;
  windowAt: number;
  windowBytes = 0;
  private chunks: Buffer[] = [];
  private done = false;
  private tracked = false;
  private readonly lease: BodyLease;

  constructor(
    private readonly res: HttpResponse,
    private readonly state: ResponseState,
    private readonly limit: number,
    private readonly intake: BodyIntake,
    private owner: BodyOwner,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (err: ApiError) => void,
  ) {
    this.startedAt = this.windowAt = state.startedAt;
    this.lease = intake.budget.lease(owner.pool);
  }

  onChunk(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.done) return;
    const size = (this.received += chunk.byteLength);
    if (size > this.limit) return this.fail(tooLarge(this.limit));
    // A body that did not come whole with its headers: watched, and counted against its owner.
    if (!isLast && !this.tracked) {
      this.tracked = true;
      this.intake.deadlines.track(this);
      const refusal = this.owned();
      if (refusal) return this.fail(refusal);
    }
    const refusal = this.lease.grow(size);
    if (refusal) return this.fail(refusal);
    if (chunk.byteLength > 0) this.chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      const chunks = this.chunks;
      this.finish();
      this.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    }
  }

  /** The deadline sweep gave up on this body. */
  cut(): void {
    if (this.done) return;
    const seconds = ((performance.now() - this.startedAt) / 1000).toFixed(1);
    const { timeoutMs, minBytesPerSecond, windowMs, unprovenBytes } = this.intake.deadlines;
    this.state.close = true;
    this.fail(
      new ApiError(
        "REQUEST_TIMEOUT",
        `The request body did not arrive in time: ${this.received} bytes in ${seconds} s. A body must keep to ${minBytesPerSecond} bytes a second over each ${windowMs / 1000} s once it is past ${unprovenBytes} bytes or ${timeoutMs / 1000} s; the connection is closed.`,
      ),
    );
  }

  /**
   * A keyed body read before its key's org was known (a cluster node fetching the key): from now
   * on it counts against the org's share, as a body read after would. Past the share it is refused
   * (503 OVERLOADED), as it would have been.
   */
  reown(id: string): void {
    if (this.owner.pool !== "keyed" || this.owner.id === id) return;
    this.owner = { pool: "keyed", id };
    const refusal = this.lease.moveTo(id);
    if (refusal) this.fail(refusal);
  }

  /** The answer was written or the client left: the bytes go back to the pool. */
  release(): void {
    this.finish();
    this.lease.release();
  }

  private fail(err: ApiError): void {
    this.release();
    this.reject(err);
  }

  private finish(): void {
    this.done = true;
    this.chunks = [];
    if (this.tracked) this.intake.deadlines.untrack(this);
  }

  /** Counts the lease against its owner's share (and, for a client, its network's). */
  private owned(): ApiError | null {
    const o = this.owner;
    if (o.pool === "keyed") return this.lease.ownedBy(o.id);
    const peer = o.peer || Buffer.from(this.res.getRemoteAddressAsText()).toString();
    const ip = this.intake.trusted.clientIp(peer, o.forwardedFor);
    return this.lease.ownedBy(addressOwner(ip), networkOwner(ip));
  }
}

function tooLarge(limit: number): ApiError {
  return new ApiError("PAYLOAD_TOO_LARGE", `Request body exceeds the limit of ${limit} bytes.`);
}

/** true for `application/json`, with or without parameters such as charset. */
export function isJsonContentType(value: string): boolean {
  const semi = value.indexOf(";");
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  return type === "application/json";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses JSON text; a syntax error becomes 400 VALIDATION_ERROR naming the body as the failing
 * path and the parser's position.
 */
export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError("VALIDATION_ERROR", "body: a JSON body is required.");
  let text: string;
  try {
    text = UTF8.decode(buf);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "body: not valid UTF-8.");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError("VALIDATION_ERROR", `body: malformed JSON (${(err as Error).message}).`);
  }
}
