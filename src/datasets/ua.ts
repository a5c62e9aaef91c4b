/**
 * User-Agent classification for the beacon and scoring: browser, OS and device class from
 * ua-parser-js 1.x, the registered bot the UA names (the dataset's bot registry, bot-registry.ts),
 * whether it carries automation tells (detectAutomation), and, for a UA that is none of these and
 * does not look like a browser (ua-shape.ts), why it is a non-browser client. One parser instance
 * is reused and results are cached by UA string, because real traffic repeats a small set of UAs.
 */
import UAParser from "ua-parser-js";
import { detectAutomation, type BotClassifier, type BotKind, type BotMatch } from "./bot-registry.js";
import { uaShape, type ClientTell } from "./ua-shape.js";

export type { ClientTell } from "./ua-shape.js";

/** Device classes reported in UaInfo.device. */
export type DeviceClass = "desktop" | "mobile" | "tablet" | "smarttv" | "console" | "wearable" | "embedded";

/** What one User-Agent says about its client. Frozen; the same object for every call with that UA while cached. */
export interface UaInfo {
  /** Browser name and major version, e.g. "Chrome 131", "Mobile Safari 17"; null when unknown. */
  browser: string | null;
  /** OS name and version, e.g. "Windows 10", "Mac OS 10.15.7", "Android 14"; null when unknown. */
  os: string | null;
  /**
   * Device class. "desktop" when ua-parser-js names no device type but the UA is an ordinary
   * browser (a known browser and rendering engine); null for empty or unrecognised UAs.
   */
  device: DeviceClass | null;
  /** The registered bot the UA names; null when none. */
  bot: BotMatch | null;
  /**
   * True when the UA carries automation or HTTP-library tells (HeadlessChrome, WebDriver,
   * Playwright, curl, python-requests, Go-http-client …). `bot` may be set too (the registry knows
   * curl): callers then report bot_kind "automation" and bot_name null but keep bot_id.
   */
  automation: boolean;
  /**
   * Set when the UA names no registered bot and no automation and does not look like a browser
   * (nor a person's device or app): the tell that says so (ua-shape.ts). Callers report such a UA
   * as `bot_kind: "client"`, a non-browser client. Null otherwise.
   */
  client: ClientTell | null;
}

/** Options of createUaClassifier, for evaluations that leave one list out (scripts/bots/ua-eval.ts). */
export interface UaClassifierOptions {
  /** Use the automation pattern (detectAutomation); default true. */
  automationPattern?: boolean;
}

export interface UaClassifier {
  /** Classifies one User-Agent header value; "" gives every field null, automation false and client "empty". */
  classify(ua: string): UaInfo;
}

const DEVICE_TYPES: ReadonlySet<string> = new Set<DeviceClass>(["mobile", "tablet", "smarttv", "console", "wearable", "embedded"]);

const EMPTY: UaInfo = Object.freeze({ browser: null, os: null, device: null, bot: null, automation: false, client: "empty" });

/** "name version" with whichever parts are known; null when the name is unknown. */
/** Bot kinds that can run as a desktop app (an agent fetching for its user); crawlers and preview fetchers run on servers. */
const APP_KINDS: ReadonlySet<BotKind> = new Set<BotKind>(["tool", "ai_assistant", "monitor", "other"]);

function label(name: string | undefined, version: string | undefined): string | null {
  if (!name) return null;
  return version ? `${name} ${version}` : name;
}

/**
 * Creates a UA classifier over one bot registry (use one per dataset build, so a dataset switch
 * switches the registry too).
 *
 * A UA shaped like a browser is given to a registered bot only where the bot's pattern literal
 * starts a token of the UA (BotClassifier.explain with `tokenStart`), so a browser token that
 * merely contains a short bot name ("SLCC2" and the bot "LCC") does not make a browser a bot.
 *
 * @param bots the compiled registry, e.g. `dataset.bots`.
 * @param cacheSize most UA strings kept (oldest evicted first); at least 1.
 * @param options see UaClassifierOptions.
 * @example createUaClassifier(dataset.bots).classify(req.userAgent).browser // "Chrome 131"
 */
export function createUaClassifier(bots: BotClassifier, cacheSize = 10_000, options: UaClassifierOptions = {}): UaClassifier {
  if (!Number.isInteger(cacheSize) || cacheSize < 1) throw new Error(`createUaClassifier: cacheSize must be a positive integer, got ${cacheSize}`);
  const automationPattern = options.automationPattern ?? true;
  const parser = new UAParser();
  const cache = new Map<string, UaInfo>();

  const evaluate = (ua: string): UaInfo => {
    parser.setUA(ua);
    const browser = parser.getBrowser();
    const engine = parser.getEngine();
    const os = parser.getOS();
    const dev = parser.getDevice();
    const type = dev.type;
    let device: DeviceClass | null = null;
    if (type !== undefined) device = DEVICE_TYPES.has(type) ? (type as DeviceClass) : null;
    else if (browser.name && engine.name) device = "desktop";
    const shape = uaShape(ua, { browser: browser.name, engine: engine.name, os: os.name, deviceType: type, deviceVendor: dev.vendor });
    // A UA shaped like a person's browser or device names a bot only by a whole token, an in-app
    // webview names none, and an Electron app only an agent, never a crawler (ua-shape.ts).
    const named = shape.tell !== null ? bots.classify(ua) : shape.webview ? null : (bots.explain(ua, { tokenStart: true })?.match ?? null);
    const bot = named !== null && shape.embedded && !APP_KINDS.has(named.bot_kind) ? null : named;
    const automation = automationPattern && detectAutomation(ua);
    return Object.freeze({
      browser: label(browser.name, browser.major),
      os: label(os.name, os.version),
      device,
      bot,
      automation,
      client: bot === null && !automation ? shape.tell : null,
    });
  };

  return {
    classify(ua: string): UaInfo {
      if (ua === "") return EMPTY;
      const hit = cache.get(ua);
      if (hit !== undefined) return hit;
      const info = evaluate(ua);
      if (cache.size >= cacheSize) {
        // Map keeps insertion order: the first key is the oldest.
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(ua, info);
      return info;
    },
  };
}
