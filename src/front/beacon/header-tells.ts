/**
 * Server-side tells of a beacon call, from its HTTP headers: what the browser's own network stack
 * sends, which page scripts cannot rewrite. Automation that overrides the User-Agent (a flag, the
 * DevTools protocol) or injects headers leaves the client hints or the header order of the real
 * engine behind. Explained in docs/api.md, "Client tells".
 */

/** The request headers these tells read (RequestSnapshot.client of beacon routes). */
export interface ClientHeaders {
  userAgent: string;
  /** Sec-CH-UA, Sec-CH-UA-Platform, Sec-CH-UA-Mobile ("" when absent). */
  secChUa: string;
  secChUaPlatform: string;
  secChUaMobile: string;
  /** Lower-case header names in the order they arrived (empty for a UA headerOrder does not check: request.ts clientHeaders). */
  order: readonly string[];
}

type Os = "windows" | "mac" | "ios" | "android" | "cros" | "linux" | "other";

function osOf(ua: string): Os {
  if (/iPhone|iPad|iPod/.test(ua)) return "ios";
  if (/Android/.test(ua)) return "android";
  if (/CrOS/.test(ua)) return "cros";
  if (/Windows NT|Win64/.test(ua)) return "windows";
  if (/Macintosh|Mac OS X/.test(ua)) return "mac";
  if (/Linux|X11/.test(ua)) return "linux";
  return "other";
}

// Sec-CH-UA-Platform values each OS's Chromium sends; a Linux UA may come from Android's
// "request desktop site".
const CH_PLATFORM: Record<Os, RegExp> = {
  windows: /^"Windows"$/,
  mac: /^"macOS"$/,
  ios: /^"iOS"$/,
  android: /^"Android"$/,
  cros: /^"Chrom(e|ium) OS"$/,
  linux: /^"(Linux|Android)"$/,
  other: /./,
};

/** Brands of a Sec-CH-UA value: `"Chromium";v="156", "Not:A-Brand";v="8"` -> [[Chromium, 156], ...]. */
export function parseSecChUa(value: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const m of value.matchAll(/"((?:[^"\\]|\\.)*)"\s*;\s*v\s*=\s*"([^"]*)"/g)) out.push([m[1]!, m[2]!]);
  return out;
}

/**
 * `ch_ua_mismatch`: the client hints the engine sent disagree with the User-Agent header: a
 * Chromium UA whose Sec-CH-UA names another version or a headless brand, the pre-2022 GREASE
 * brand on a recent version, another OS in Sec-CH-UA-Platform, a mobile flag that contradicts the
 * UA, or client hints on a UA of an engine that never sends them (Firefox, Safari).
 */
export function chUaMismatch(h: ClientHeaders): boolean {
  if (h.secChUa === "") return false; // not sent on plain http, nor by every client
  const ua = h.userAgent;
  const m = /(?:Chrome|Chromium)\/(\d+)/.exec(ua);
  if (!m || /Firefox\//.test(ua)) return true;
  const major = Number(m[1]);
  const brands = parseSecChUa(h.secChUa);
  if (brands.some(([b]) => /HeadlessChrome/i.test(b))) return true;
  const chromium = brands.find(([b]) => /^(Chromium|Google Chrome|Microsoft Edge)$/.test(b));
  if (chromium && Number(chromium[1]) !== major) return true;
  if (major >= 110 && brands.some(([b, v]) => /^ ?Not ?A;Brand$/.test(b) && v === "99")) return true;
  if (h.secChUaPlatform !== "" && !CH_PLATFORM[osOf(ua)].test(h.secChUaPlatform)) return true;
  if (h.secChUaMobile === "?1" && !/Mobi|Android/.test(ua)) return true;
  return false;
}

/**
 * `header_order`: a Chromium UA whose Accept-Language arrived before its Accept-Encoding. Chromium's
 * network stack adds both last, Accept-Encoding first; headers injected through the DevTools
 * protocol (a spoofed language) come earlier. Firefox sends them the other way round, so only
 * Chromium UAs are checked.
 */
export function headerOrder(h: ClientHeaders): boolean {
  if (!readsHeaderOrder(h.userAgent)) return false;
  const language = h.order.indexOf("accept-language");
  const encoding = h.order.indexOf("accept-encoding");
  return language >= 0 && encoding >= 0 && language < encoding;
}

/** Whether headerOrder looks at the header order of a call with this User-Agent (a Chromium UA). */
export function readsHeaderOrder(userAgent: string): boolean {
  return /(?:Chrome|Chromium)\//.test(userAgent) && !/Firefox\//.test(userAgent);
}

/** The server-side tells of one beacon call. */
export function headerTells(h: ClientHeaders): string[] {
  const out: string[] = [];
  if (chUaMismatch(h)) out.push("ch_ua_mismatch");
  if (headerOrder(h)) out.push("header_order");
  return out;
}
