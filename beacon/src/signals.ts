import { consistencyTells, type Brand, type ClientFacts } from "./consistency.js";
import { globalTells, hashHex, isDesktopChrome, type Signals } from "./core.js";

/** Every probe here may throw in odd embeddings (sandboxed frames, locked-down browsers). */
function attempt<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

let interactions = 0;

/** Counts pointer, key, touch and scroll events from now on (passive, capture, never reads them). */
export function countInteractions(): void {
  for (const type of ["pointerdown", "pointermove", "keydown", "touchstart", "scroll", "wheel"]) {
    addEventListener(type, () => interactions++, { passive: true, capture: true });
  }
}

let cdpSeen: boolean | undefined;

/**
 * Chrome DevTools Protocol with the Runtime domain enabled (Puppeteer, Playwright, Selenium 4 CDP,
 * an open DevTools window): the inspector formats an Error logged to the console, which calls
 * `Error.prepareStackTrace`; without an inspector nothing reads the stack. The older trick (a `stack`
 * getter on the error) no longer fires in current Chromium. Runs once: one verbose-level
 * console line, hidden by default in DevTools.
 */
function isCdp(): boolean {
  if (cdpSeen === undefined) {
    cdpSeen = false;
    const E = Error as unknown as { prepareStackTrace?: unknown };
    const saved = E.prepareStackTrace;
    try {
      E.prepareStackTrace = () => {
        cdpSeen = true;
        return "";
      };
      console.debug(new Error(""));
    } catch {
      // A frozen Error or a replaced console: no verdict, no tell.
    }
    E.prepareStackTrace = saved;
  }
  return cdpSeen;
}

let gl: [string, string] | undefined;

/** Unmasked WebGL vendor and renderer ("", "" without WebGL); the context is released at once. */
function webgl(): [string, string] {
  return (gl ??= attempt(() => {
    const ctx = document.createElement("canvas").getContext("webgl");
    if (!ctx) return ["", ""];
    const info = ctx.getExtension("WEBGL_debug_renderer_info");
    const out: [string, string] = [
      String(ctx.getParameter(info ? info.UNMASKED_VENDOR_WEBGL : ctx.VENDOR)),
      String(ctx.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : ctx.RENDERER)),
    ];
    const lose = ctx.getExtension("WEBGL_lose_context");
    if (lose) lose.loseContext();
    return out;
  }, ["", ""] as [string, string]));
}

/** What only asynchronous APIs answer (high-entropy client hints, a permission query); read once. */
let slow: Pick<ClientFacts, "fullVersionList" | "notificationQuery"> = { fullVersionList: null, notificationQuery: null };

/**
 * Reads the facts that need a promise, before the first hit is built; never rejects, and gives
 * up after `ms` (a hit is never held back for long).
 */
export function readSlowFacts(ms = 500): Promise<void> {
  const nav = navigator as Navigator & { userAgentData?: { getHighEntropyValues(h: string[]): Promise<{ fullVersionList?: Brand[] }> } };
  const versions = attempt(() => nav.userAgentData!.getHighEntropyValues(["fullVersionList"]).then((v) => v.fullVersionList || []), null as unknown as Promise<Brand[]>);
  const query = attempt(() => nav.permissions.query({ name: "notifications" as PermissionName }).then((p) => p.state as string), null as unknown as Promise<string>);
  const settle = <T>(p: Promise<T> | null): Promise<T | null> => (p ? p.then((v) => v, () => null) : Promise.resolve(null));
  const both = Promise.all([settle(versions), settle(query)]).then(([fullVersionList, notificationQuery]) => {
    slow = { fullVersionList, notificationQuery };
  });
  return Promise.race([both, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
}

const DISPLAY_MODES = ["browser", "fullscreen", "standalone", "minimal-ui", "window-controls-overlay"];

/** The facts the consistency tells compare (consistency.ts); raw values stay in the page. */
function clientFacts(): ClientFacts {
  const nav = navigator as Navigator & { userAgentData?: { brands: Brand[]; platform: string } };
  const uad = attempt(() => nav.userAgentData || null, null);
  return {
    ua: nav.userAgent,
    platform: attempt(() => nav.platform, ""),
    brands: uad ? attempt(() => uad.brands.map((b) => ({ brand: b.brand, version: b.version })), null) : null,
    uaPlatform: uad ? attempt(() => uad.platform, null) : null,
    secure: attempt(() => isSecureContext, false),
    inner: [innerWidth, innerHeight],
    outer: [outerWidth, outerHeight],
    screen: attempt(() => [screen.width, screen.height] as [number, number], [0, 0] as [number, number]),
    displayMode: attempt(() => DISPLAY_MODES.find((m) => matchMedia("(display-mode: " + m + ")").matches) || "", ""),
    notification: attempt(() => Notification.permission as string, null),
    renderer: webgl()[1],
    ...slow,
  };
}

/** Names of the automation tells seen in the page (beacon/README.md; at most 32). */
export function detectTells(): string[] {
  const nav = navigator;
  const ua = nav.userAgent;
  const brands = attempt(() => (nav as unknown as { userAgentData: { brands: { brand: string }[] } }).userAgentData.brands, []);
  const names = attempt(() => Object.getOwnPropertyNames(window).concat(Object.getOwnPropertyNames(document)), [] as string[]);
  const root = document.documentElement;
  if (root && ["selenium", "webdriver", "driver"].some((a) => root.hasAttribute(a))) names.push("_selenium");
  // Only set when our code runs inside a Puppeteer page.evaluate (e.g. a scraper calling fsBeacon.signals()).
  if (/puppeteer_evaluation_script/.test(attempt(() => String(new Error().stack), ""))) names.push("__puppeteer");
  const found: [string, unknown][] = [
    ["webdriver", nav.webdriver === true],
    ["headless_ua", /HeadlessChrome/.test(ua) || brands.some((b) => /HeadlessChrome/.test(b.brand))],
    ["cdp", isCdp()],
    ["no_languages", attempt(() => !nav.languages.length, false)],
    ["no_plugins", isDesktopChrome(ua) && attempt(() => !nav.plugins.length, false)],
    ["outer_zero", !outerWidth || !outerHeight],
    ["swiftshader", /SwiftShader|llvmpipe/i.test(webgl()[1])],
  ];
  return found
    .filter(([, seen]) => seen)
    .map(([tell]) => tell)
    .concat(globalTells(names), attempt(() => consistencyTells(clientFacts()), []));
}

let fp: string | undefined;

/** Hex hash of a light fingerprint; the raw values never leave the page. */
export function fingerprint(): string {
  return (fp ??= attempt(() => {
    const s = screen;
    const nav = navigator as Navigator & { deviceMemory?: number };
    const canvas = document.createElement("canvas");
    canvas.width = 120;
    canvas.height = 24;
    const ctx = canvas.getContext("2d");
    if (ctx) {
      ctx.fillStyle = "#f60";
      ctx.fillRect(2, 2, 60, 18);
      ctx.fillStyle = "#069";
      ctx.font = "14px Arial";
      ctx.fillText("fs,\u{1F600}!", 4, 17);
    }
    return hashHex(
      [
        s.width,
        s.height,
        s.colorDepth,
        Intl.DateTimeFormat().resolvedOptions().timeZone,
        nav.languages,
        nav.hardwareConcurrency,
        nav.deviceMemory,
        nav.platform,
        webgl(),
        canvas.toDataURL(),
      ].join("|"),
    );
  }, ""));
}

/** The `signals` of a hit, as of now. */
export function collectSignals(rtt?: number): Signals {
  return {
    tells: detectTells(),
    fp: fingerprint() || undefined,
    timing: { elapsed_ms: Math.round(performance.now()), interactions, rtt_ms: rtt },
    ua: navigator.userAgent,
  };
}
