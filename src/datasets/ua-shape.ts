/**
 * Whether a User-Agent looks like a browser (or a person's device), judged from its structure
 * rather than from a list of names: a UA is a browser only when ua-parser-js recognises a browser
 * and its rendering engine on a platform (an OS or a device). Anything else that names no
 * registered bot and no automation is a non-browser client, and `clientTell` says why.
 *
 * The tells, in the order they are tried:
 * - `empty`: no User-Agent at all (every browser sends one).
 * - `bot_token`: the UA calls itself a bot, crawler, spider or scraper, or gives a contact address
 *   (an http(s) URL, `www.`, an e-mail address): browsers never do, self-declared bots always.
 * - `runtime`: a language runtime or HTTP stack with its version (`PHP/8.1`, `ruby/3.1`,
 *   `Python/3.11`, `Node.js v20`, `Lua`, `libcurl/8`, `dart:io` …): a program, not a browser.
 * - `inconsistent`: tokens or versions that no real browser sends together: anything but
 *   "KHTML, like Gecko" (and old WebKit's ", Safari/…") in WebKit's parenthesis, a Chrome from
 *   version 28 (Blink; off iOS and Mac) whose AppleWebKit is not 537.36, a browser UA glued
 *   after another product (`Thumbor/6.7, Mozilla/5.0 …`), or quotes and angle brackets (injection
 *   probes).
 * - then the UA passes when it is browser-shaped: a browser or an engine named on a platform (an
 *   OS or device ua-parser-js found, or a platform word in the first parenthesis). The browser's
 *   name may be one ua-parser-js does not know when an engine is named (`LibWeb`, `Webkit 1.3`,
 *   old IE's and Opera's implied Trident and Presto); the engine may be missing when the browser
 *   is one whose real UAs carry none (iCab), never when the UA claims Chrome, Firefox, Safari,
 *   Edge or Opera; and on a platform no program fetching the web runs on (BeOS, Haiku, the Amiga
 *   family, RISC OS, OS/2, DOS) neither is needed. Or
 *   device-shaped (a phone, tablet, TV, console, wearable or car that ua-parser-js identifies by
 *   type together with its vendor or OS, as feature phones and in-app stacks on a device are), or
 *   an app on Apple's or Android's own HTTP stack (`CFNetwork/… Darwin/…`, `Dalvik/… (Linux; U;
 *   Android …)`), which people's apps send.
 * - `incomplete`: a browser name without the engine or platform every real one sends (truncated or
 *   hand-written UAs: `Mozilla/5.0 Chrome/120`).
 * - `no_browser`: a `Mozilla/` prefix with no browser behind it (`Mozilla/5.0`, WinHttp,
 *   PowerShell).
 * - `library`: product/version tokens with no browser and no `Mozilla/` prefix (`scalaj-http/1.0`,
 *   `lua-resty-http/0.16.1`, `GuzzleHttp/7`).
 */

/** Why a UA that names no registered bot and no automation is not taken for a browser. */
export type ClientTell = "empty" | "bot_token" | "runtime" | "inconsistent" | "incomplete" | "no_browser" | "library";

/** Every ClientTell, in the order the tells are tried. */
export const CLIENT_TELLS: readonly ClientTell[] = Object.freeze(["empty", "bot_token", "runtime", "inconsistent", "incomplete", "no_browser", "library"]);

/** What ua-parser-js found in the UA (names only; undefined when not found). */
export interface ParsedUa {
  browser: string | undefined;
  engine: string | undefined;
  os: string | undefined;
  /** ua-parser-js device type: mobile, tablet, smarttv, console, wearable, embedded. */
  deviceType: string | undefined;
  deviceVendor: string | undefined;
}

/** The verdict on one UA's shape. */
export interface UaShape {
  /** A recognised browser with its engine on a platform, and no bot or runtime token. */
  browser: boolean;
  /**
   * A browser-shaped UA of an app's in-app webview: Android's `; wv)` or an iOS page view without
   * Safari's `Safari/` token. A person's app showing a page; the app names some registries list
   * (Pinterest, Viber) name the app's own crawler, which never sends a webview UA.
   */
  webview: boolean;
  /**
   * A browser-shaped UA of a desktop app built on Electron, which carries the app's own name
   * beside the engine's (`Slack/4.36`, `WhatsApp/2.2348`). Such an app can be an agent that fetches
   * pages (an AI editor such as Cursor, a transaction monitor) but never a crawler or a
   * link-preview fetcher run from a server, which a registry may name after the same word
   * (WhatsApp's previews, the SEO crawler "Sonic" and Slack's `Sonic` token).
   */
  embedded: boolean;
  /** Null when the UA looks like a browser or a person's device or app; else why not. */
  tell: ClientTell | null;
}

/**
 * A self-declared bot: a word ending in "bot" or "bots" ("Googlebot", "MyBot/1.0"), a crawler,
 * spider or scraper word, or a contact address. Linear: no nested quantifiers.
 */
const BOT_TOKEN_RE =
  /bots?(?![a-z])|crawl|spider|scrap(?:er|ing)|slurp|(?<![a-z])scanner|monitor(?:ing)?(?![a-z])|synthetics?(?![a-z])|transcoder|https?:\/\/|(?:^|[\s(;+])www\.[a-z0-9-]+\.[a-z]|@[a-z0-9-]+\.[a-z]{2,}/i;

/** Phone brands whose names end in "bot" (Cubot), which BOT_TOKEN_RE must not take for bots. */
const BOT_WORD_EXCEPTIONS_RE = /cubot/gi;

/**
 * A language runtime or HTTP stack named with a version: what programs put in their UA. Browsers'
 * ".NET CLR 2.0" and "Java;" in feature-phone UAs carry no such version and do not match.
 */
const RUNTIME_RE =
  /(?:^|[\s(;,/])(?:java|python|php|ruby|perl|golang|go|lua|luajit|ngx_lua|erlang|otp|elixir|dart|deno|bun|rust|scala|kotlin|jvm|graalvm|libcurl|dotnet|mono)\/\d|(?:^|[\s(;,])(?:node(?:\.js)? v?\d|ruby \d|\.net core \d)|\(lua\)|dart:io|\(perl\)|\bjava\)/i;

/**
 * Tokens no real browser sends together (see `inconsistent` in the module comment). The Chrome and
 * AppleWebKit versions are compared in `inconsistent()`, which needs the OS.
 */
const INCONSISTENT_RE = /\(KHTML, like Gecko(?:;|,(?! Safari)| [^)])|^[^(,|]*[,|]\s*Mozilla\/|['"<>`]|\$\{/i;
const WEBKIT_RE = /AppleWebKit\/([\d.]+)/;
const CHROME_RE = /\bChrome\/(\d+)/;

function inconsistent(text: string, parsed: ParsedUa): boolean {
  if (INCONSISTENT_RE.test(text)) return true;
  // Chrome 28 and later (Blink) always send AppleWebKit/537.36, except on iOS and on an iPad asking
  // for the desktop site (a Mac UA with WebKit's version): there Chrome runs on WebKit.
  const chrome = CHROME_RE.exec(text);
  if (chrome !== null && Number(chrome[1]) >= 28 && parsed.os !== "iOS" && parsed.os !== "Mac OS") {
    const wk = WEBKIT_RE.exec(text);
    if (wk !== null && wk[1] !== "537.36") return true;
  }
  return false;
}

/** Tokens of feature-phone browsers and WAP gateways. */
const FEATURE_PHONE_RE = /MIDP-\d|CLDC-\d|UP\.Browser|UP\.Link|NetFront|Obigo|Teleca|Openwave|Dolfin|BREW|WAP/;

/** A person's app on the platform's own HTTP stack. */
const APP_STACK_RE = /\bCFNetwork\/[\d.]+ Darwin\/[\d.]+|^[^()]*\bDalvik\/[\d.]+ \(Linux; U; Android /;

/** In-app webviews: Android System WebView's `wv` flag, or iOS WKWebView (Mobile/ with no Safari/ after it). */
const WEBVIEW_RE = /; wv\)|\((?:iPhone|iPad|iPod)[^)]*\) AppleWebKit\/[\d.]+ \(KHTML, like Gecko\)(?![^]*Safari\/)[^]*Mobile\/\w+/;

/** A desktop app on Electron (its default UA: the app's token, then Chrome/…, Electron/…). */
const EMBEDDED_RE = /\bChrome\/[\d.]+ Electron\/\d/;

/** A platform named in the UA's first parenthesis that ua-parser-js may not turn into an OS ("(Windows; rv:81.0)"). */
const PLATFORM_RE =
  /^[^(]*\((?:[^)]*;\s*)?(?:Windows|Macintosh|X11|Linux|Android|iPhone|iPad|iPod|CrOS|BlackBerry|BB10|SMART-TV|PlayStation|Nintendo|Xbox|(?:Free|Open|Net|DragonFly)BSD|SunOS|Haiku|BeOS|AmigaOS|MorphOS|AROS|RISC OS|OS\/2|SerenityOS|DOS|Inferno|Fuchsia)\b/;

/**
 * Desktop platforms that programs fetching the web do not run on (BeOS, Haiku, the Amiga family,
 * RISC OS, OS/2, SerenityOS, DOS, Inferno): a UA that names one in its first parenthesis is a person's browser
 * even when neither its name nor its engine is one ua-parser-js knows (`IBrowse/2.4 (AmigaOS 3.9;
 * 68K)`, `Mozilla/3.0 (compatible; NetPositive/2.2.2; BeOS)`).
 */
const HOBBY_PLATFORM_RE = /^[^(]*\((?:[^)]*[;/]\s*)?(?:Haiku|BeOS|AmigaOS|MorphOS|AROS|RISC OS|OS\/2|SerenityOS|DOS|Inferno)\b/;

/** A rendering engine named with its version, as rare browsers send it (`Uzbl (Webkit 1.3)`, `LibWeb+LibJS/1.0`). */
const ENGINE_TOKEN_RE = /\b(?:Apple)?Web[Kk]it[/ ]\d|\bGecko\/\d|\bKHTML\/\d|\bPresto\/\d|\bTrident\/\d|\bGoanna\/\d|\bLibWeb\b|\bServo\/\d/;

/**
 * Browsers whose every real UA carries its engine's token: a UA claiming one of them without the
 * engine is hand-written or truncated (`incomplete`). A browser ua-parser-js knows that sends no
 * such token (iCab, Dillo, NetSurf) needs only its platform.
 */
const ENGINE_CLAIMED_RE = /\b(?:Chrome|Chromium|CriOS|Firefox|FxiOS|Safari|Edg(?:e|A|iOS)?|OPR|Version)\/\d/;

/** ua-parser-js device types of a person's device (not "desktop", which it never reports). */
const DEVICE_TYPES: ReadonlySet<string> = new Set(["mobile", "tablet", "smarttv", "console", "wearable", "embedded"]);

/** Old IE (and its shells: Avant, Maxthon …) and Opera, which ua-parser-js names without an engine: Trident and Presto. */
const ENGINE_IMPLIED_RE = /\bMSIE \d|^Opera\/\d/;

/**
 * Judges one UA's shape (see the module comment).
 * @param ua the User-Agent header as sent.
 * @param parsed what ua-parser-js found in it.
 * @example uaShape("scalaj-http/1.0", { browser: undefined, … }) // { browser: false, tell: "library" }
 */
export function uaShape(ua: string, parsed: ParsedUa): UaShape {
  const text = ua.trim();
  if (text === "") return { browser: false, webview: false, embedded: false, tell: "empty" };
  if (BOT_TOKEN_RE.test(text.replace(BOT_WORD_EXCEPTIONS_RE, ""))) return { browser: false, webview: false, embedded: false, tell: "bot_token" };
  if (RUNTIME_RE.test(text)) return { browser: false, webview: false, embedded: false, tell: "runtime" };
  if (inconsistent(text, parsed)) return { browser: false, webview: false, embedded: false, tell: "inconsistent" };
  const engine = parsed.engine !== undefined || ENGINE_IMPLIED_RE.test(text) || ENGINE_TOKEN_RE.test(text);
  // A text-mode browser (Lynx, w3m, Links: ua-parser-js names it its own engine) sends no platform.
  const platform =
    parsed.os !== undefined || parsed.deviceType !== undefined || (parsed.engine !== undefined && parsed.engine === parsed.browser) || PLATFORM_RE.test(text);
  // A browser is a named browser or a named engine on a platform: the browser's own name is not
  // needed (an engine ua-parser-js knows, on Haiku or SerenityOS), nor the engine where the
  // browser's real UAs never send one (iCab), nor either on a platform no program runs on.
  const named = parsed.browser !== undefined ? engine || !ENGINE_CLAIMED_RE.test(text) : engine;
  if ((named && platform) || HOBBY_PLATFORM_RE.test(text)) return { browser: true, webview: WEBVIEW_RE.test(text), embedded: EMBEDDED_RE.test(text), tell: null };
  const device = parsed.deviceType !== undefined && DEVICE_TYPES.has(parsed.deviceType) && (parsed.deviceVendor !== undefined || parsed.os !== undefined);
  if (device || FEATURE_PHONE_RE.test(text) || APP_STACK_RE.test(text)) return { browser: false, webview: false, embedded: false, tell: null };
  if (parsed.browser !== undefined) return { browser: false, webview: false, embedded: false, tell: "incomplete" };
  return { browser: false, webview: false, embedded: false, tell: /^Mozilla\//i.test(text) ? "no_browser" : "library" };
}
