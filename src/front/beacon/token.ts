import { createHmac, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../../shared/ids.js";

const VERIFIED_MAX = 50_000;

/** `s_` plus 22 base62 characters (131 bits). */
export const SESSION_ID = /^s_[0-9A-Za-z]{22}$/;

export function newSessionId(): string {
  return `s_${randomBase62(22)}`;
}

/**
 * Handshake tokens: `v1.<project_id>.<session_id>.<expiry, base36 epoch ms>.<HMAC-SHA256,
 * base64url, 128 bits>` over the project id, the session id and the expiry, keyed by a secret the
 * store keeps (generated at first start). A token proves that a script fetched from this service
 * ran the handshake for this project and session within its lifetime; it is not a secret from the
 * page. The project id travels in clear so a site's backend can hand the token to POST /v1/check,
 * which finds the project from it. A test key's tokens name the project's test scope
 * (`prj_…:test`, records.ts scopedId), so they prove nothing for its live sessions, and the other way round.
 */
export class BeaconTokens {
  /**
   * Tokens already verified, with what they proved: a session sends the same token on every hit
   * for its lifetime, so the HMAC (~3 µs) is computed once. Bounded: cleared when full. Expiry
   * is still checked on every call.
   */
  private readonly verified = new Map<string, { projectId: string; sessionId: string; expiresAt: number }>();

  constructor(
    private readonly secret: Buffer,
    private readonly ttlMs: number,
  ) {}

  /** A token for this project and session, valid from `nowMs` for the configured lifetime. */
  issue(projectId: string, sessionId: string, nowMs: number): { token: string; expiresAt: number } {
    const expiresAt = nowMs + this.ttlMs;
    const exp = expiresAt.toString(36);
    return { token: `v1.${projectId}.${sessionId}.${exp}.${this.mac(projectId, sessionId, exp)}`, expiresAt };
  }

  /** The session id a valid, unexpired token for this project is bound to; null otherwise. */
  verify(token: string, projectId: string, nowMs: number): string | null {
    const t = this.inspect(token, nowMs);
    return t !== null && t.projectId === projectId ? t.sessionId : null;
  }

  /**
   * The session a token of this project proves its holder was given, expired or not, as long as
   * it expired less than `graceMs` ago; null otherwise. Only the beacon that ran a handshake for
   * a session holds its token, so the token, not the session id (which travels to the site's
   * backend, into answers and listings), is what lets a later hit or handshake continue it.
   */
  provenSession(token: string, projectId: string, nowMs: number, graceMs: number): string | null {
    const t = this.inspect(token, nowMs - graceMs);
    return t !== null && t.projectId === projectId ? t.sessionId : null;
  }

  /** Milliseconds since a valid token was issued (its expiry less the lifetime); null when it is not valid. */
  ageMs(token: string, nowMs: number): number | null {
    this.inspect(token, nowMs);
    const known = this.verified.get(token);
    return known !== undefined && known.expiresAt > nowMs ? nowMs - (known.expiresAt - this.ttlMs) : null;
  }

  /**
   * The project and session a valid token is bound to, when it expires after `nowMs`; null
   * otherwise (a bad signature, a malformed or expired token).
   */
  inspect(token: string, nowMs: number): { projectId: string; sessionId: string } | null {
    const known = this.verified.get(token);
    if (known !== undefined) return known.expiresAt > nowMs ? known : null;
    if (token.length > 160) return null;
    const parts = token.split(".");
    if (parts.length !== 5 || parts[0] !== "v1") return null;
    const [, projectId, sessionId, exp, mac] = parts as [string, string, string, string, string];
    if (!/^prj_[0-9A-Za-z]{1,40}(:test)?$/.test(projectId) || !SESSION_ID.test(sessionId) || !/^[0-9a-z]{1,12}$/.test(exp)) return null;
    const expiresAt = parseInt(exp, 36);
    if (!(expiresAt > nowMs)) return null;
    const want = Buffer.from(this.mac(projectId, sessionId, exp));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    const proved = { projectId, sessionId, expiresAt };
    this.verified.set(token, proved);
    return proved;
  }

  private mac(projectId: string, sessionId: string, exp: string): string {
    return createHmac("sha256", this.secret).update(`${projectId}\n${sessionId}\n${exp}`).digest("base64url").slice(0, 22);
  }
}
