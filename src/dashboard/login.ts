import { flashBox, page } from "./layout.js";
import type { Flash } from "./sessions.js";

/**
 * GET /dashboard/login: sign in with one of the org's secret keys. The key goes to the server in
 * a password field and is checked like an API call's; the browser keeps only the session cookie.
 */
export function loginPage(message: Flash | null): string {
  return page("Sign in", `${message ? flashBox(message) : ""}
<form method="post" action="/dashboard/login">
<p><label for="key">Secret key of your org</label><br>
<input id="key" name="key" type="password" autocomplete="current-password" required size="60" placeholder="fs_live_…" aria-describedby="key-help" autofocus></p>
<p id="key-help" class="muted">The key is sent to this server once and never stored in your browser. Publishable keys (fs_pub_live_…) cannot sign in.</p>
<p><button type="submit">Sign in</button></p></form>`, null);
}

/** What the sign-in page says after a sign-out or an ended session. */
export function loginMessage(m: string | null, hadCookie: boolean, idleMinutes: number): Flash | null {
  if (m === "signed-out") return { kind: "ok", text: "You are signed out." };
  if (m === "key-disabled") return { kind: "ok", text: "The key you signed in with is disabled, so you are signed out." };
  if (m === "ended" || hadCookie) return { kind: "error", text: `Your session has ended (after ${idleMinutes} minutes without activity, a restart of the service, or a key that was disabled); sign in again.` };
  return null;
}
