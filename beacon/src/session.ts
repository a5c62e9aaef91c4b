import { sessionCookie, sessionFromCookie, tokenCookie, tokenFromCookie, validSession, validToken } from "./core.js";

const KEY = "_fs";
const TOKEN_KEY = "_fs_t";
let memory: { session_id?: string; token?: string } = {};

/**
 * The session id and its last token from the `_fs` and `_fs_t` cookies, else sessionStorage,
 * else memory (cookies may be off). The handshake continues the session only with its token.
 */
export function loadSession(): { session_id?: string; token?: string } {
  try {
    const fromCookie = sessionFromCookie(document.cookie);
    if (fromCookie) return { session_id: fromCookie, token: tokenFromCookie(document.cookie) };
  } catch {
    // document.cookie throws in sandboxed frames.
  }
  try {
    const stored = validSession(sessionStorage.getItem(KEY));
    if (stored) return { session_id: stored, token: validToken(sessionStorage.getItem(TOKEN_KEY)) };
  } catch {
    // Storage access throws with storage blocked.
  }
  return memory;
}

/** Keeps the id and its token in first-party cookies and in sessionStorage, whichever works. */
export function saveSession(sessionId: string, token: string | undefined): void {
  memory = { session_id: sessionId, token };
  const https = location.protocol === "https:";
  try {
    document.cookie = sessionCookie(sessionId, https);
    // A token of another session proves nothing: expire the stale one.
    document.cookie = tokenCookie(token || "", https);
  } catch {
    // Cookies unavailable: sessionStorage or memory carries the id.
  }
  try {
    sessionStorage.setItem(KEY, sessionId);
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage blocked: memory only.
  }
}
