import { hashKey, hashesEqual, parseKey, type Scope } from "../shared/api-keys.js";
import { scopedId, type KeyRecord } from "../store/records.js";
import type { StateDbs } from "../store/state-env.js";
import { ApiError } from "../shared/errors.js";

/** What a route requires of the caller. */
export type AuthRequirement =
  | { kind: "none" }
  /** The admin token; `orTokenHash`: or the token with that SHA-256 (GET /metrics's FS_METRICS_TOKEN). */
  | { kind: "admin"; orTokenHash?: string | null }
  /**
   * A secret key, with `scope` among its scopes; `live`: a live-mode key (a test key is refused).
   * Checked by the pipeline (http/pipeline.ts authorize), after the key is verified.
   */
  | { kind: "secret"; scope?: Scope; live?: true }
  | { kind: "publishable" };

/** Whether the caller's key is a test-mode key: charged nothing, no quota (docs/api.md, "Test mode"). */
export function isTestPrincipal(principal: KeyPrincipal | null): boolean {
  return principal !== null && principal.key.mode === "test";
}

/**
 * The id the caller's org or project keeps the caller's mode's data under (observations,
 * sessions, bindings, feedback): the id itself for a live key, its test scope for a test key.
 */
export function dataScope(principal: KeyPrincipal, id: string): string {
  return scopedId(id, principal.key.mode === "test");
}

/** The authenticated caller of an API-key route. */
export interface KeyPrincipal {
  key: KeyRecord;
  orgId: string;
}

/**
 * Verifies API keys and the admin token on the front thread, synchronously.
 * Key records are read from the state environment (read-only) and cached by key id; the admin
 * routes that change keys run on this same thread and call `forgetKey`, so the cache stays exact.
 */
export class Authenticator {
  private readonly cache = new Map<string, KeyRecord>();
  /**
   * Presented keys already proven to hash to their record's digest, mapped to the key id. Saves
   * the SHA-256 (~1.2 µs) on repeat callers. A key's digest never changes, so entries stay valid
   * when the record changes (disable, expiry are read from `cache`, which forgetKey refreshes).
   * Bounded: cleared when it reaches VERIFIED_MAX.
   */
  private readonly verified = new Map<string, string>();

  constructor(
    private readonly dbs: { keys: Pick<StateDbs["keys"], "get"> },
    private readonly adminTokenHash: string,
    /**
     * Runs for each key that passed, before the call does anything: on a cluster node it reads
     * what the call will need of the store first (a publishable key's project), so that may wait.
     */
    private readonly onVerified?: (key: KeyRecord) => void,
    /** Runs for each key that passed (keyUseRecorder: the key's last_used_at). */
    private readonly onUsed?: (keyId: string, nowMs: number) => void,
  ) {}

  /**
   * Checks an `Authorization: Bearer <key>` header against the requirement.
   * Order of checks: missing, invalid, expired, disabled, then type (docs/api.md, "Authentication");
   * the capabilities the route needs (scope, mode) are checked next, by the pipeline (authorize).
   */
  verifyKey(header: string, need: Extract<AuthRequirement, { kind: "secret" | "publishable" }>, nowMs: number): KeyPrincipal {
    const plain = bearer(header);
    const known = this.verified.get(plain);
    const key = known !== undefined ? this.lookup(known) : this.verifyNew(plain);
    // A deleted key is answered exactly as one that never existed.
    if (!key || key.deleted_at !== undefined) throw new ApiError("INVALID_KEY", "Invalid API key.");
    if (key.expires_at !== null && nowMs >= key.expires_at) throw new ApiError("EXPIRED_KEY", "API key expired.");
    if (key.disabled_at !== null) throw new ApiError("KEY_DISABLED", "API key disabled.");
    if (need.kind === "secret") {
      if (key.type !== "secret") {
        throw new ApiError("KEY_TYPE_NOT_ALLOWED", "Publishable keys are accepted only on beacon endpoints; use a secret key (fs_live_).");
      }
    } else if (key.type !== "publishable") {
      throw new ApiError("KEY_TYPE_NOT_ALLOWED", "Beacon endpoints take a publishable key (fs_pub_live_); keep secret keys server-side.");
    }
    this.onUsed?.(key.id, nowMs);
    this.onVerified?.(key);
    return { key, orgId: key.org_id };
  }

  /** Full check of a key not seen before: format, record, constant-time digest comparison. */
  private verifyNew(plain: string): KeyRecord {
    const parsed = parseKey(plain);
    if (!parsed) throw new ApiError("INVALID_KEY", "Invalid API key.");
    const key = this.lookup(parsed.id);
    // Same work whether or not the id exists, then a constant-time comparison of digests.
    const presented = hashKey(plain);
    if (!key || !hashesEqual(presented, key.hash) || key.type !== parsed.type || (key.mode ?? "live") !== parsed.mode) {
      throw new ApiError("INVALID_KEY", "Invalid API key.");
    }
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(plain, key.id);
    return key;
  }

  /** Checks the admin bearer token (or the other token whose hash is `orTokenHash`) in constant time. */
  verifyAdmin(header: string, orTokenHash?: string | null): void {
    const presented = hashKey(bearer(header));
    const admin = hashesEqual(presented, this.adminTokenHash);
    const other = orTokenHash ? hashesEqual(presented, orTokenHash) : false;
    if (!admin && !other) throw new ApiError("INVALID_KEY", "Invalid admin token.");
  }

  /** Drops a cached key record after the writer changed it. */
  forgetKey(keyId: string): void {
    this.cache.delete(keyId);
  }

  /**
   * Caches the record the writer just committed (key created or disabled). Taking it from the
   * writer's answer, not from a re-read, means no older read snapshot can bring the old one back.
   */
  rememberKey(key: KeyRecord): void {
    this.cache.set(key.id, key);
  }

  /** Ids of the key records cached (a cluster re-reads them: pg/refresh.ts). */
  cachedKeyIds(): string[] {
    return [...this.cache.keys()];
  }

  /** The current record of a key by id (the cache this class keeps exact), e.g. to re-check a dashboard session's key. */
  keyById(id: string): KeyRecord | undefined {
    return this.lookup(id);
  }

  private lookup(id: string): KeyRecord | undefined {
    let key = this.cache.get(id);
    if (!key) {
      key = this.dbs.keys.get(id);
      if (key) this.cache.set(id, key);
    }
    return key;
  }
}

const VERIFIED_MAX = 10_000;

/** The token of an `Authorization: Bearer <token>` header; 401 MISSING_KEY when there is none. */
function bearer(header: string): string {
  if (!header) throw new ApiError("MISSING_KEY", "Missing Authorization header; send 'Authorization: Bearer <API key>'.");
  // Fast path for the common exact form; anything else goes through the tolerant pattern.
  if (header.startsWith("Bearer ") && header.indexOf(" ", 7) < 0 && header.length > 7) return header.slice(7);
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new ApiError("INVALID_KEY", "Malformed Authorization header; expected 'Bearer <API key>'.");
  return m[1]!;
}

/** How often one front thread records a key's use (its last_used_at is as fresh as this). */
export const KEY_USED_EVERY_MS = 60_000;
/** Keys whose last recorded use a thread remembers before it starts again (each then records once more). */
const KEY_USED_MAX = 100_000;

/**
 * The Authenticator's `onUsed` for one front thread: sends `key.used` to the writer on a key's
 * first call and then at most once per KEY_USED_EVERY_MS, without waiting for it (a call never
 * waits on this write; a lost one is made good by the next minute's).
 * @example new Authenticator(dbs, hash, undefined, keyUseRecorder((keyId, atMs) => store.send({ op: "key.used", keyId, atMs })))
 */
export function keyUseRecorder(send: (keyId: string, atMs: number) => Promise<unknown>): (keyId: string, nowMs: number) => void {
  const sent = new Map<string, number>();
  return (keyId, nowMs) => {
    const last = sent.get(keyId);
    if (last !== undefined && nowMs - last < KEY_USED_EVERY_MS) return;
    if (sent.size >= KEY_USED_MAX) sent.clear();
    sent.set(keyId, nowMs);
    send(keyId, nowMs).catch(() => {});
  };
}
