/**
 * The beacon's pure parts: configuration, hashing, session ids, tell matching and payloads.
 * No DOM types and no globals here, so test/unit can import this file under Node.
 */

/** What the script tag asks for, defaults applied. */
export interface BeaconConfig {
  key: string;
  /** Whether to send one `page.view` on load. */
  pageload: boolean;
  /** Whether to attach to forms. */
  forms: boolean;
  action: string;
  formSelector: string;
  field: string;
  initUrl: string;
  collectUrl: string;
  probeUrl: string;
  reportUrl: string;
}

/** `signals` of a hit (beacon/README.md). */
export interface Signals {
  tells: string[];
  fp?: string;
  timing: { elapsed_ms: number; interactions: number; rtt_ms?: number };
  ua: string;
}

/** What the handshake and collect leave behind; every field may still be missing. */
export interface BeaconState {
  token?: string;
  session_id?: string;
  observation_id?: string;
}

/**
 * Reads the `data-fs-*` attributes through `attr` and applies the defaults (docs/api.md, "The beacon script").
 * Empty attributes count as absent; an unknown mode falls back to `auto`.
 * @param attr returns the attribute value or null (e.g. `(n) => script.getAttribute(n)`)
 * @param origin the script's origin, e.g. `https://fs.example.com`
 * @returns null without a project key
 */
export function readConfig(attr: (name: string) => string | null, origin: string): BeaconConfig | null {
  const get = (name: string, fallback: string): string => (attr("data-fs-" + name) || "").trim() || fallback;
  const key = get("project-key", "");
  if (!key) return null;
  const mode = get("mode", "auto").toLowerCase();
  return {
    key,
    pageload: mode !== "forms",
    forms: mode !== "pageload",
    action: get("action", "pageview"),
    formSelector: get("form-selector", "form"),
    field: get("field", "_fs_signals"),
    initUrl: get("init-url", origin + "/v1/handshake"),
    collectUrl: get("collect-url", origin + "/v1/collect"),
    probeUrl: get("probe-url", origin + "/v1/probe"),
    reportUrl: origin + "/v1/report",
  };
}

/**
 * cyrb53 (public domain, bryc): a fast 53-bit string hash, as 14 hex characters.
 * Not cryptographic; it only keeps raw fingerprint values off the wire.
 */
export function hashHex(str: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

const SESSION_ID = /^s_[0-9A-Za-z]{22}$/;

/** The well-formed session id in a value, or undefined (never send junk to the handshake). */
export function validSession(value: string | null | undefined): string | undefined {
  return value && SESSION_ID.test(value) ? value : undefined;
}

/** The value of cookie `name` in a `document.cookie` string, if any. */
function cookieValue(cookie: string, name: string): string | undefined {
  const m = new RegExp("(?:^|;\\s*)" + name + "=([^;]*)").exec(cookie);
  return m ? m[1] : undefined;
}

/** A first-party cookie of the beacon's (beacon/README.md): one year, whole site, SameSite=Lax. */
function beaconCookie(name: string, value: string, https: boolean): string {
  return `${name}=${value}; path=/; max-age=31536000; SameSite=Lax${https ? "; Secure" : ""}`;
}

/** The `_fs` session id from a `document.cookie` string, if well-formed. */
export function sessionFromCookie(cookie: string): string | undefined {
  return validSession(cookieValue(cookie, "_fs"));
}

/** The `_fs` cookie to set after the first collect (beacon/README.md). */
export function sessionCookie(sessionId: string, https: boolean): string {
  return beaconCookie("_fs", sessionId, https);
}

const TOKEN = /^v1\.[0-9A-Za-z_.-]{1,200}$/;

/** The well-formed token in a value, or undefined. */
export function validToken(value: string | null | undefined): string | undefined {
  return value && TOKEN.test(value) ? value : undefined;
}

/** The `_fs_t` token (the session's last, which lets the next handshake continue it) from a `document.cookie` string. */
export function tokenFromCookie(cookie: string): string | undefined {
  return validToken(cookieValue(cookie, "_fs_t"));
}

/** The `_fs_t` cookie, set with `_fs` (beacon/README.md); an empty token expires it. */
export function tokenCookie(token: string, https: boolean): string {
  return token ? beaconCookie("_fs_t", token, https) : "_fs_t=; path=/; max-age=0";
}

/** Tells found by the names of window/document properties an automation driver leaves behind. */
const GLOBAL_TELLS: [string, RegExp][] = [
  ["selenium", /^(\$[a-z]dc_|__(selenium|webdriver|driver|fxdriver)_|_selenium$|callSelenium$|_Selenium_IDE_Recorder$|domAutomation)/],
  ["playwright", /^(__playwright|__pw)/],
  ["puppeteer", /^__puppeteer/],
  ["nightmare", /^__nightmare/],
  ["phantom", /^(callPhantom|_phantom)$/],
];

/**
 * Strong tells from property names, deduplicated, in table order.
 * @example globalTells(["$cdc_asdjflasutopfhvcZLmcfl_", "__pwInitScripts"]) // ["selenium", "playwright"]
 */
export function globalTells(names: readonly string[]): string[] {
  return GLOBAL_TELLS.filter(([, re]) => names.some((n) => re.test(n))).map(([tell]) => tell);
}

/** True for a desktop Chrome/Chromium user agent (where an empty plugin list is a weak tell). */
export function isDesktopChrome(ua: string): boolean {
  return /Chrom(e|ium)\//.test(ua) && !/Mobile|Android|CrOS/.test(ua);
}

/** One hit for `/v1/collect` (`page.view`) or `/v1/report` (`form.submit`). */
export function buildHit(kind: "page.view" | "form.submit", action: string, state: BeaconState, page: string, signals: Signals) {
  return { kind, action, token: state.token, session_id: state.session_id, page, signals };
}

/** The JSON the hidden form field carries (beacon/README.md "Forms"); undefined members drop out. */
export function fieldValue(action: string, state: BeaconState, signals: Signals): string {
  const { token, session_id, observation_id } = state;
  return JSON.stringify({ v: 1, token, session_id, action, observation_id, signals });
}
