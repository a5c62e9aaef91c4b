import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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

export class SessionStore {
  /** Keyed by the SHA-256 of the cookie value: a heap dump does not hand out live cookies. */
  private readonly sessions = new Map<string, DashboardSession>();
  /** When each session's idle clock was last shared (SessionLink). */
  private readonly shared = new Map<string, number>();

  constructor(
    private readonly idleMs: number,
    private readonly maxSessions = 10_000,
    private readonly link: SessionLink | null = null,
  ) {
    link?.subscribe((digest, session) => {
      if (session) this.sessions.set(digest, session);
      else this.sessions.delete(digest);
    });
  }

  /** A new session; returns the cookie value (shown to the browser only). */
  create(orgId: string, keyId: string, nowMs: number): { id: string; session: DashboardSession } {
    if (this.sessions.size >= this.maxSessions) this.sweep(nowMs);
    if (this.sessions.size >= this.maxSessions) {
      // Still full of live sessions: the one idle longest goes.
      let oldest: string | null = null;
      let at = Infinity;
      for (const [k, s] of this.sessions) if (s.lastSeen < at) [oldest, at] = [k, s.lastSeen];
      if (oldest !== null) this.sessions.delete(oldest);
    }
    const id = randomBytes(32).toString("base64url");
    const session: DashboardSession = { orgId, keyId, csrf: randomBytes(32).toString("base64url"), createdAt: nowMs, lastSeen: nowMs, flash: null };
    const d = digest(id);
    this.sessions.set(d, session);
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
      this.sessions.delete(k);
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
    const k = digest(id);
    this.sessions.delete(k);
    this.shared.delete(k);
    this.link?.publish(k, null);
  }

  /** Ends every session signed in with this key (it was disabled). */
  destroyForKey(keyId: string): void {
    for (const [k, s] of this.sessions) {
      if (s.keyId !== keyId) continue;
      this.sessions.delete(k);
      this.shared.delete(k);
      this.link?.publish(k, null);
    }
  }

  private share(k: string, s: DashboardSession, nowMs: number): void {
    if (!this.link) return;
    this.shared.set(k, nowMs);
    this.link.publish(k, { ...s });
  }

  /** Drops idle sessions; returns how many are left. */
  sweep(nowMs: number): number {
    for (const [k, s] of this.sessions) {
      if (nowMs - s.lastSeen < this.idleMs) continue;
      this.sessions.delete(k);
      this.shared.delete(k);
    }
    return this.sessions.size;
  }

  get size(): number {
    return this.sessions.size;
  }
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
 * How the front threads share sign-in outcomes (FS_FRONT_THREADS > 1, peers.ts): each thread
 * publishes its wrong keys and successes and applies the others'.
 */
export interface LoginLink {
  publish(address: string, nowMs: number, ok: boolean): void;
  subscribe(take: (address: string, nowMs: number, ok: boolean) => void): void;
}

/**
 * Wrong keys per client address: at most `max` failures in `windowMs`; beyond that sign-ins from
 * the address are refused until the window has passed. A success clears the address's count.
 * With several front threads (`link`), every thread counts every thread's failures; one that
 * arrives from another thread is counted within that thread's next event-loop turn, so sign-ins
 * racing on several threads in that instant may pass the limit by the few in flight.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 15 * 60_000,
    private readonly maxAddresses = 100_000,
    private readonly link: LoginLink | null = null,
  ) {
    link?.subscribe((address, nowMs, ok) => (ok ? this.clear(address) : this.count(address, nowMs)));
  }

  /** Seconds until the address may try again; 0 when it may now. */
  retryAfter(address: string, nowMs: number): number {
    const f = this.failures.get(address);
    if (!f) return 0;
    if (nowMs - f.since >= this.windowMs) {
      this.failures.delete(address);
      return 0;
    }
    return f.count >= this.max ? Math.ceil((f.since + this.windowMs - nowMs) / 1000) : 0;
  }

  fail(address: string, nowMs: number): void {
    this.count(address, nowMs);
    this.link?.publish(address, nowMs, false);
  }

  succeed(address: string): void {
    this.clear(address);
    this.link?.publish(address, Date.now(), true);
  }

  private count(address: string, nowMs: number): void {
    const f = this.failures.get(address);
    if (f && nowMs - f.since < this.windowMs) {
      f.count++;
      return;
    }
    if (this.failures.size >= this.maxAddresses) {
      for (const [a, v] of this.failures) if (nowMs - v.since >= this.windowMs) this.failures.delete(a);
      if (this.failures.size >= this.maxAddresses) this.failures.clear();
    }
    this.failures.set(address, { count: 1, since: nowMs });
  }

  private clear(address: string): void {
    this.failures.delete(address);
  }
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
