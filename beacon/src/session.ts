import { sessionCookie, sessionFromCookie, validSession } from "./core.js";

const KEY = "_fs";
let memory: string | undefined;

/** The session id from the `_fs` cookie, else sessionStorage, else memory (cookies may be off). */
export function loadSession(): string | undefined {
  try {
    const fromCookie = sessionFromCookie(document.cookie);
    if (fromCookie) return fromCookie;
  } catch {
    // document.cookie throws in sandboxed frames.
  }
  try {
    const stored = validSession(sessionStorage.getItem(KEY));
    if (stored) return stored;
  } catch {
    // Storage access throws with storage blocked.
  }
  return memory;
}

/** Keeps the id in the first-party `_fs` cookie and in sessionStorage, whichever works. */
export function saveSession(sessionId: string): void {
  memory = sessionId;
  try {
    document.cookie = sessionCookie(sessionId, location.protocol === "https:");
  } catch {
    // Cookies unavailable: sessionStorage or memory carries the id.
  }
  try {
    sessionStorage.setItem(KEY, sessionId);
  } catch {
    // Storage blocked: memory only.
  }
}
