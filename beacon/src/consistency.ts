/**
 * Consistency tells: what a page reports about itself that a real browser cannot show together.
 * Automation toolkits spoof one layer (the User-Agent string, `navigator.webdriver`, a few
 * globals) and leave another as the engine set it; these checks compare the layers. Pure: the
 * page reads the facts (signals.ts) and only tell names leave it. Each tell is explained in
 * docs/api.md, "Client tells".
 */

/** One brand of `navigator.userAgentData` or of its high-entropy `fullVersionList`. */
export interface Brand {
  brand: string;
  version: string;
}

/** What the page read; every field may be missing (null) in odd embeddings. */
export interface ClientFacts {
  ua: string;
  /** navigator.platform */
  platform: string;
  /** navigator.userAgentData.brands, or null when the API is absent. */
  brands: Brand[] | null;
  /** navigator.userAgentData.platform */
  uaPlatform: string | null;
  /** High-entropy fullVersionList, or null when it was not read (yet). */
  fullVersionList: Brand[] | null;
  /** Whether the page is a secure context (userAgentData exists only there). */
  secure: boolean;
  inner: [number, number];
  outer: [number, number];
  screen: [number, number];
  /** The first matching `display-mode` ("browser", "fullscreen", "standalone", ...). */
  displayMode: string;
  /** Notification.permission and permissions.query({ name: "notifications" }).state, or null. */
  notification: string | null;
  notificationQuery: string | null;
  /** Unmasked WebGL renderer ("" without WebGL). */
  renderer: string;
}

/** The operating system a User-Agent string claims. */
export type UaOs = "windows" | "mac" | "ios" | "android" | "cros" | "linux" | "other";

/** The OS a UA string names, read the way browsers write it. */
export function uaOs(ua: string): UaOs {
  if (/iPhone|iPad|iPod/.test(ua)) return "ios";
  if (/Android/.test(ua)) return "android";
  if (/CrOS/.test(ua)) return "cros";
  if (/Windows NT|Win64|Windows Phone/.test(ua)) return "windows";
  if (/Macintosh|Mac OS X/.test(ua)) return "mac";
  if (/Linux|X11/.test(ua)) return "linux";
  return "other";
}

/** The Chromium major version a UA string claims (Chrome, Chromium, Edge...), or 0. */
export function chromiumMajor(ua: string): number {
  const m = /(?:Chrome|Chromium|CriOS)\/(\d+)/.exec(ua);
  return m ? Number(m[1]) : 0;
}

/** True for a desktop UA (no phone or tablet token). */
export function isDesktopUa(ua: string): boolean {
  return !/Mobi|Android|iPhone|iPad|iPod|Tablet|CrOS/.test(ua);
}

// userAgentData.platform and navigator.platform as each OS's browsers report them.
const UAD_PLATFORM: Record<UaOs, RegExp> = {
  windows: /^Windows$/,
  mac: /^macOS$/,
  ios: /^iOS$/,
  android: /^Android$/,
  cros: /^Chrom(e|ium) OS$/,
  linux: /^(Linux|Android)$/, // "request desktop site" on Android sends a Linux UA
  other: /./,
};
const NAV_PLATFORM: Record<UaOs, RegExp> = {
  windows: /^Win/,
  mac: /^Mac/,
  ios: /^(iPhone|iPad|iPod|MacIntel)/,
  android: /^(Linux|Android|null|$)/,
  cros: /^(Linux|CrOS)/,
  linux: /^(Linux|X11|FreeBSD|OpenBSD)/,
  other: /.?/,
};

/** Lowercased brand names without the GREASE entry (its name varies by design). */
function realBrands(list: Brand[]): string[] {
  return list
    .map((b) => b.brand)
    .filter((b) => !/not.?a.?brand/i.test(b))
    .map((b) => b.toLowerCase())
    .sort();
}

/**
 * `uach_mismatch`: User-Agent Client Hints that disagree with the UA string or with themselves:
 * a Chromium UA without `userAgentData` in a secure page (or a non-Chromium UA with it), another
 * Chromium version or OS than the UA string, the pre-2022 GREASE brand on a recent version,
 * brands that differ from the high-entropy `fullVersionList`, or an empty `fullVersionList`
 * (a UA override that left the hints unset).
 */
export function uachMismatch(f: Pick<ClientFacts, "ua" | "brands" | "uaPlatform" | "fullVersionList" | "secure">): boolean {
  const major = chromiumMajor(f.ua);
  const claimsChromium = major >= 90 && !/Firefox|FxiOS/.test(f.ua);
  if (f.brands === null) return claimsChromium && f.secure && !/CriOS/.test(f.ua); // Chrome on iOS is WebKit
  if (!claimsChromium) return f.brands.length > 0;
  const chromium = f.brands.find((b) => /^(Chromium|Google Chrome|Microsoft Edge)$/.test(b.brand));
  if (chromium && Number(chromium.version) !== major) return true;
  if (major >= 110 && f.brands.some((b) => /^ ?Not ?A;Brand$/.test(b.brand) && b.version === "99")) return true;
  if (f.uaPlatform !== null && f.uaPlatform !== "" && !UAD_PLATFORM[uaOs(f.ua)].test(f.uaPlatform)) return true;
  if (f.fullVersionList !== null) {
    if (f.fullVersionList.length === 0 && f.brands.length > 0) return true;
    if (f.fullVersionList.length > 0 && realBrands(f.fullVersionList).join() !== realBrands(f.brands).join()) return true;
  }
  return false;
}

/** `platform_mismatch`: navigator.platform names another OS than the UA string. */
export function platformMismatch(ua: string, platform: string): boolean {
  return !NAV_PLATFORM[uaOs(ua)].test(platform);
}

/**
 * Window geometry tells, for a desktop browser in a normal tab (`display-mode: browser`; in
 * fullscreen, kiosk or installed-app windows the page may legitimately cover the screen):
 * - `viewport_is_screen`: the page is exactly the size of the screen: an emulated screen set to
 *   the viewport, as headless automation does;
 * - `no_window_chrome`: the window is exactly the page, with no tabs, toolbar or frame;
 * - `window_exceeds_screen`: the window is larger than the screen it is on (beyond the invisible
 *   frame a maximised window may have).
 */
export function geometryTells(f: Pick<ClientFacts, "ua" | "inner" | "outer" | "screen" | "displayMode">): string[] {
  if (!isDesktopUa(f.ua) || f.displayMode !== "browser") return [];
  const [iw, ih] = f.inner;
  const [ow, oh] = f.outer;
  const [sw, sh] = f.screen;
  if (!(iw > 0 && ih > 0 && sw > 0 && sh > 0)) return [];
  const out: string[] = [];
  if (iw === sw && ih === sh) out.push("viewport_is_screen");
  if (ow === iw && oh === ih) out.push("no_window_chrome");
  if (ow > sw + 32 || oh > sh + 32) out.push("window_exceeds_screen");
  return out;
}

/** `permission_mismatch`: Notification.permission and the Permissions API disagree. */
export function permissionMismatch(notification: string | null, query: string | null): boolean {
  if (notification === null || query === null) return false;
  const expected: Record<string, string> = { default: "prompt", granted: "granted", denied: "denied" };
  return expected[notification] !== undefined && expected[notification] !== query;
}

/** `webgl_mismatch`: a GPU renderer string that only exists on another OS than the UA's. */
export function webglMismatch(ua: string, renderer: string): boolean {
  const os = uaOs(ua);
  if (/Direct3D|D3D11/.test(renderer)) return os !== "windows";
  if (/OpenGL Engine|Apple (M\d|GPU)/.test(renderer)) return os !== "mac" && os !== "ios";
  return false;
}

/** Every consistency tell of the facts, in a fixed order. */
export function consistencyTells(f: ClientFacts): string[] {
  const found: [string, boolean][] = [
    ["uach_mismatch", uachMismatch(f)],
    ["platform_mismatch", platformMismatch(f.ua, f.platform)],
    ["permission_mismatch", permissionMismatch(f.notification, f.notificationQuery)],
    ["webgl_mismatch", webglMismatch(f.ua, f.renderer)],
  ];
  return found
    .filter(([, seen]) => seen)
    .map(([tell]) => tell)
    .concat(geometryTells(f));
}
