import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { formatIp, formatIpv6, type ParsedIp } from "../shared/ip.js";

/**
 * Dashboard sessions: a random id in an HttpOnly, SameSite=Strict cookie, and on the server what
 * the id stands for. The signed-in key itself is never kept: a session holds the org and key ids,
 * and every request checks that key again (enabled, not expired). Sessions live in this process's
 * memory, so a restart signs everyone out; they end after `idleMs` without a request.
 */

/** One signed-in browser. */
export interface DashboardSession {
  orgId: string;
  keyId: string;
  /** Hidden field of every form; a POST without it is refused (403). */
  csrf: string;
  createdAt: number;
  lastSeen: number;
  /** A message for the next page shown (a new secret key, which is shown once; a change made). */
  flash: Flash | null;
}

export interface Flash {
  kind: "ok" | "error";
  text: string;
  /** A new key's plain text, shown once on the next page and then forgotten. */
  secret?: string;
}

/** Name of the session cookie. `__Host-` needs Secure, so the plain name is used over http. */
export function cookieName(secure: boolean): string {
  return secure ? "__Host-fs_dash" : "fs_dash";
}

/**
 * How the front threads (FS_FRONT_THREADS > 1) share dashboard sessions: a thread publishes a
 * session it created or changed (or null once it ended), keyed by the cookie's digest, and takes
 * what the others publish (FrontPeers). A browser's next request may reach any thread.
 */
export interface SessionLink {
  publish(digest: string, session: DashboardSession | null): void;
  subscribe(take: (digest: string, session: DashboardSession | null) => void): void;
}

/** A session's idle clock is shared with the other threads at most this often. */
const TOUCH_SHARE_MS = 60_000;

/** How many sessions a SessionStore keeps (FS_DASHBOARD_MAX_SESSIONS, FS_DASHBOARD_SESSIONS_PER_ORG). */
export interface SessionLimits {
  /** All orgs together: the bound on memory. */
  max: number;
  /** One org's: a new sign-in beyond it ends that org's oldest session, never another org's. */
  perOrg: number;
}

export class SessionStore {
  /** Keyed by the SHA-256 of the cookie value: a heap dump does not hand out live cookies. */
  private readonly sessions = new Map<string, DashboardSession>();
  /** The digests of each org's sessions, for the per-org cap. */
  private readonly byOrg = new Map<string, Set<string>>();
  /** When each session's idle clock was last shared (SessionLink). */
  private readonly shared = new Map<string, number>();

  constructor(
    private readonly idleMs: number,
    private readonly limits: SessionLimits = { max: 10_000, perOrg: 100 },
    private readonly link: SessionLink | null = null,
  ) {
    link?.subscribe((digest, session) => {
      if (!session) return this.drop(digest);
      this.put(digest, session);
      // Another thread's sign-in: this thread ends the same sessions it did (the oldest of the org).
      this.makeRoom(session.orgId, nowOf(session), 0, false);
    });
  }

  /** A new session; returns the cookie value (shown to the browser only). */
  create(orgId: string, keyId: string, nowMs: number): { id: string; session: DashboardSession } {
    this.makeRoom(orgId, nowMs, 1, true);
    const id = randomBytes(32).toString("base64url");
    const session: DashboardSession = { orgId, keyId, csrf: randomBytes(32).toString("base64url"), createdAt: nowMs, lastSeen: nowMs, flash: null };
    const d = digest(id);
    this.put(d, session);
    this.share(d, session, nowMs);
    return { id, session };
  }

  /** The live session of a cookie value, its idle clock restarted; null when unknown or idle too long. */
  get(id: string | undefined, nowMs: number): DashboardSession | null {
    if (!id || id.length > 100) return null;
    const k = digest(id);
    const s = this.sessions.get(k);
    if (!s) return null;
    if (nowMs - s.lastSeen >= this.idleMs) {
      this.drop(k);
      return null;
    }
    s.lastSeen = nowMs;
    if (this.link && nowMs - (this.shared.get(k) ?? 0) >= TOUCH_SHARE_MS) this.share(k, s, nowMs);
    return s;
  }

  /** The session of a cookie value was changed (its flash message): the other threads take it. */
  changed(id: string | undefined, nowMs: number): void {
    if (!id || !this.link) return;
    const k = digest(id);
    const s = this.sessions.get(k);
    if (s) this.share(k, s, nowMs);
  }

  destroy(id: string | undefined): void {
    if (!id) return;
    this.end(digest(id), true);
  }

  /** Ends every session signed in with this key (it was disabled). */
  destroyForKey(keyId: string): void {
    for (const [k, s] of this.sessions) if (s.keyId === keyId) this.end(k, true);
  }

  /** Drops idle sessions; returns how many are left. */
  sweep(nowMs: number): number {
    for (const [k, s] of this.sessions) if (nowMs - s.lastSeen >= this.idleMs) this.drop(k);
    return this.sessions.size;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions of one org. */
  sizeOf(orgId: string): number {
    return this.byOrg.get(orgId)?.size ?? 0;
  }

  /**
   * Ends sessions until `adding` more fit: first the org's oldest beyond its cap; then, when all
   * orgs together are at the bound with live sessions, the oldest of the org holding the most
   * (an org with fewer sessions than another is never the one to lose one). `publish`: this
   * thread decided (a sign-in here), so the other threads are told.
   */
  private makeRoom(orgId: string, nowMs: number, adding: number, publish: boolean): void {
    while (this.sizeOf(orgId) + adding > this.limits.perOrg) this.end(this.oldestOf(orgId)!, publish);
    if (this.sessions.size + adding <= this.limits.max) return;
    this.sweep(nowMs);
    while (this.sessions.size + adding > this.limits.max) {
      let largest = orgId;
      for (const [org, set] of this.byOrg) if (set.size > this.sizeOf(largest)) largest = org;
      this.end(this.oldestOf(largest)!, publish);
    }
  }

  /** The org's session signed in first (ties: the smaller digest, so every thread picks the same). */
  private oldestOf(orgId: string): string | null {
    let oldest: string | null = null;
    let at = Infinity;
    for (const k of this.byOrg.get(orgId) ?? []) {
      const t = this.sessions.get(k)!.createdAt;
      if (t < at || (t === at && k < oldest!)) [oldest, at] = [k, t];
    }
    return oldest;
  }

  private put(k: string, s: DashboardSession): void {
    const before = this.sessions.get(k);
    if (before && before.orgId !== s.orgId) this.drop(k);
    this.sessions.set(k, s);
    let set = this.byOrg.get(s.orgId);
    if (!set) this.byOrg.set(s.orgId, (set = new Set()));
    set.add(k);
  }

  /** Forgets a session on this thread only. */
  private drop(k: string): void {
    const s = this.sessions.get(k);
    this.shared.delete(k);
    if (!s) return;
    this.sessions.delete(k);
    const set = this.byOrg.get(s.orgId);
    set?.delete(k);
    if (set?.size === 0) this.byOrg.delete(s.orgId);
  }

  /** Ends a session, on every thread when `publish`. */
  private end(k: string, publish: boolean): void {
    this.drop(k);
    if (publish) this.link?.publish(k, null);
  }

  private share(k: string, s: DashboardSession, nowMs: number): void {
    if (!this.link) return;
    this.shared.set(k, nowMs);
    this.link.publish(k, { ...s });
  }
}

/** The latest time a session shared by another thread shows (its clock is the other thread's). */
function nowOf(s: DashboardSession): number {
  return Math.max(s.lastSeen, s.createdAt);
}

function digest(id: string): string {
  return createHash("sha256").update(id).digest("base64url");
}

/** Whether a submitted form's token is the session's, compared in constant time. */
export function csrfValid(session: DashboardSession, token: string | null | undefined): boolean {
  if (!token) return false;
  const a = Buffer.from(token);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * How the front threads share wrong sign-in keys (FS_FRONT_THREADS > 1, peers.ts): each thread
 * publishes the wrong keys it saw (client address and key id, "" when the text was not shaped like
 * a key) and counts the others'.
 */
export interface LoginLink {
  publish(address: string, keyId: string, nowMs: number): void;
  subscribe(take: (address: string, keyId: string, nowMs: number) => void): void;
}

/**
 * Wrong sign-in keys, counted per client address (an IPv6 address by its /64: signInAddress) and
 * per key id (the public part of a presented key, so guesses at one key from many addresses add
 * up). After `max` wrong keys within `windowMs` for either, further wrong keys are answered 429
 * with the seconds `retryAfter` gives, and each one restarts the window: the refusal lasts while
 * wrong keys keep coming. It never refuses a right key: the caller checks the key first and asks
 * only about keys that failed, so no client locks out the others behind its address, nor the
 * owner of the key it guesses at. A success does not clear a count (a client's own key would
 * otherwise reset its count of guesses at other keys).
 *
 * With several front threads (`link`), every thread counts every thread's wrong keys; one that
 * arrives from another thread is counted within that thread's next event-loop turn.
 */
export class LoginLimiter {
  private readonly addresses: FailureCounts;
  private readonly keyIds: FailureCounts;

  constructor(
    max = 10,
    windowMs = 15 * 60_000,
    maxTracked = 100_000,
    private readonly link: LoginLink | null = null,
  ) {
    this.addresses = new FailureCounts(max, windowMs, maxTracked);
    this.keyIds = new FailureCounts(max, windowMs, maxTracked);
    link?.subscribe((address, keyId, nowMs) => this.count(address, keyId, nowMs));
  }

  /** Seconds wrong keys from this address, or for this key id, are answered 429 still; 0: they are answered 401. */
  retryAfter(address: string, keyId: string, nowMs: number): number {
    return Math.max(this.addresses.retryAfter(address, nowMs), keyId ? this.keyIds.retryAfter(keyId, nowMs) : 0);
  }

  /** Counts a wrong key (on every thread). */
  fail(address: string, keyId: string, nowMs: number): void {
    this.count(address, keyId, nowMs);
    this.link?.publish(address, keyId, nowMs);
  }

  private count(address: string, keyId: string, nowMs: number): void {
    this.addresses.add(address, nowMs);
    if (keyId) this.keyIds.add(keyId, nowMs);
  }
}

/** Failures per name in a window, at most `maxTracked` names (the oldest window is forgotten first). */
class FailureCounts {
  /** In order of window start: a window that starts again moves to the end. */
  private readonly counts = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxTracked: number,
  ) {}

  retryAfter(name: string, nowMs: number): number {
    const f = this.counts.get(name);
    if (!f || f.count < this.max || nowMs - f.since >= this.windowMs) return 0;
    return Math.max(1, Math.ceil((f.since + this.windowMs - nowMs) / 1000));
  }

  add(name: string, nowMs: number): void {
    const f = this.counts.get(name);
    if (f && nowMs - f.since < this.windowMs) {
      f.count++;
      // Past the limit, each failure starts the window again.
      if (f.count > this.max) this.restart(name, f, nowMs);
      return;
    }
    if (f) this.counts.delete(name);
    else if (this.counts.size >= this.maxTracked) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(name, { count: 1, since: nowMs });
  }

  private restart(name: string, f: { count: number; since: number }, nowMs: number): void {
    f.since = Math.max(f.since, nowMs);
    this.counts.delete(name);
    this.counts.set(name, f);
  }
}

/** What the sign-in limit counts an address as: IPv4 as it is, IPv6 by its /64 (one subscriber's network). */
export function signInAddress(ip: ParsedIp): string {
  return ip.version === 4 ? formatIp(ip) : `${formatIpv6([ip.words[0]!, ip.words[1]!, 0, 0])}/64`;
}

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Set-Cookie for the session (`value` null: the cookie is removed). */
export function sessionCookie(value: string | null, secure: boolean): string {
  const attrs = [`${cookieName(secure)}=${value ?? ""}`, "Path=/", "HttpOnly", "SameSite=Strict"];
  if (secure) attrs.push("Secure");
  if (value === null) attrs.push("Max-Age=0");
  return attrs.join("; ");
}

/**
 * Whether a POST comes from a page of this service. Browsers send Origin on every POST; a
 * request without it (an old browser, a tool) must carry a Referer of this service instead.
 * `hosts` are the names this service answers to (`host[:port]`: the Host header, and behind a
 * trusted proxy X-Forwarded-Host and FS_PUBLIC_URL's); a default port on either side is ignored.
 */
export function sameOrigin(origin: string, referer: string, hosts: readonly string[]): boolean {
  const own = new Set(hosts.filter(Boolean).map((h) => h.trim().toLowerCase().replace(/:(80|443)$/, "")));
  if (own.size === 0) return false;
  const hostOf = (url: string): string | null => {
    try {
      const u = new URL(url);
      return u.protocol === "http:" || u.protocol === "https:" ? u.host.replace(/:(80|443)$/, "") : null;
    } catch {
      return null;
    }
  };
  const from = origin ? (origin === "null" ? null : hostOf(origin)) : referer ? hostOf(referer) : null;
  return from !== null && own.has(from);
}
