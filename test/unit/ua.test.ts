import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileBotRegistry, emptyBotClassifier, type BotEntry } from "../../src/datasets/bot-registry.js";
import { createUaClassifier } from "../../src/datasets/ua.js";
import { CLIENT_TELLS } from "../../src/datasets/ua-shape.js";

const verification = { ranges: false, range_ids: [], rdns_masks: [] };
const BOTS: BotEntry[] = [
  { bot_id: "googlebot", name: "Googlebot", operator: "Google", kind: "search_crawler", patterns: ["Googlebot"], verification: { ranges: true, range_ids: ["googlebot"], rdns_masks: ["crawl-***.googlebot.com"] }, sources: ["arcjet"] },
  { bot_id: "curl", name: "curl", operator: null, kind: "tool", patterns: ["^curl/"], verification, sources: ["arcjet"] },
  // Short names that real browser tokens contain ("SLCC2") or that apps share with their crawler.
  { bot_id: "lcc", name: "LCC", operator: null, kind: "search_crawler", patterns: ["LCC"], verification, sources: ["ai-robots-txt"] },
  { bot_id: "pinterestbot", name: "Pinterestbot", operator: "Pinterest", kind: "preview", patterns: ["Pinterest(bot)?\\/"], verification, sources: ["arcjet"] },
  { bot_id: "gtmetrix", name: "GTmetrix", operator: null, kind: "monitor", patterns: ["GTmetrix"], verification, sources: ["crawler-user-agents"] },
  // Words a registry names that desktop apps on Electron also carry: a preview fetcher, an SEO crawler, an AI editor.
  { bot_id: "whatsappbot", name: "WhatsAppBot", operator: "Meta", kind: "preview", patterns: ["WhatsApp"], verification, sources: ["arcjet"] },
  { bot_id: "sonic", name: "Sonic", operator: null, kind: "seo", patterns: ["Sonic"], verification, sources: ["arcjet"] },
  { bot_id: "cursor", name: "Cursor", operator: null, kind: "ai_assistant", patterns: ["Cursor"], verification, sources: ["ai-robots-txt"] },
];

const CHROME_WIN = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const SAFARI_MAC = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15";
const CHROME_ANDROID = "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36";
const IPAD = "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1";
const FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const SMART_TV = "Mozilla/5.0 (SMART-TV; LINUX; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 85.0.4183.93/6.0 TV Safari/537.36";
const HEADLESS = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36";

describe("createUaClassifier", () => {
  const ua = createUaClassifier(compileBotRegistry(BOTS));

  it("names browser (name and major), OS and device class", () => {
    expect(ua.classify(CHROME_WIN)).toMatchObject({ browser: "Chrome 131", os: "Windows 10", device: "desktop", bot: null, automation: false });
    expect(ua.classify(SAFARI_MAC)).toMatchObject({ browser: "Safari 17", os: "Mac OS 10.15.7", device: "desktop" });
    expect(ua.classify(CHROME_ANDROID)).toMatchObject({ browser: "Chrome 131", os: "Android 14", device: "mobile" });
    expect(ua.classify(IPAD)).toMatchObject({ browser: "Mobile Safari 16", os: "iOS 16.6", device: "tablet" });
    expect(ua.classify(FIREFOX_LINUX)).toMatchObject({ browser: "Firefox 133", os: "Linux", device: "desktop" });
    expect(ua.classify(SMART_TV).device).toBe("smarttv");
  });

  it("gives null fields for empty and unrecognised UAs, which are clients", () => {
    expect(ua.classify("")).toEqual({ browser: null, os: null, device: null, bot: null, automation: false, client: "empty" });
    expect(ua.classify("   ")).toMatchObject({ bot: null, client: "empty" });
    expect(ua.classify("xyzzy")).toMatchObject({ browser: null, os: null, device: null, bot: null, client: "library" });
  });

  it("calls HTTP libraries and programs that no list names non-browser clients, with the tell", () => {
    const cases: Array<[string, string]> = [
      ["scalaj-http/1.0", "library"],
      ["lua-resty-http/0.16.1 (Lua) ngx_lua/10019", "runtime"],
      ["HTTP_Request2/2.3.0 (https://github.com/pear/HTTP_Request2) PHP/8.1.2", "bot_token"],
      ["rest-client/2.1.0 (linux-gnu x86_64) ruby/3.1.2p20", "runtime"],
      ["Dart/3.2 (dart:io)", "runtime"],
      ["GuzzleHttp/7", "library"],
      ["Mozilla/5.0", "no_browser"],
      ["Mozilla/5.0 (Windows NT 10.0; Microsoft Windows 10.0.22631; en-US) PowerShell/7.4.0", "no_browser"],
      ["Mozilla/5.0 (compatible; FooCrawler/1.0)", "bot_token"],
      ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "incomplete"],
      // Tokens no real browser sends together.
      ["Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko GomezAgent 3.0) Chrome/56.0.2924.87 Safari/537.36", "inconsistent"],
      ["Mozilla/5.0 (Linux; Android 7.0; SM-G930V) AppleWebKit/605.36 (KHTML, like Gecko) Chrome/107.0.4183.121 Mobile Safari/537.36", "inconsistent"],
      ["Thumbor/6.7.5, Mozilla/5.0 (Linux; Android 9; RAZER Phone) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/76.0.3809.111 Mobile Safari/537.36", "inconsistent"],
      [`${CHROME_WIN}'+(select load_file('x'))+'`, "inconsistent"],
    ];
    for (const [u, tell] of cases) expect(ua.classify(u), u).toMatchObject({ bot: null, automation: false, client: tell });
    // A registered bot or automation is reported as such, never as a client.
    expect(ua.classify("curl/8.5.0").client).toBeNull();
    expect(ua.classify("python-requests/2.32.3").client).toBeNull();
  });

  it("takes real browsers, old and unusual ones included, for browsers", () => {
    for (const u of [
      CHROME_WIN, SAFARI_MAC, CHROME_ANDROID, IPAD, FIREFOX_LINUX, SMART_TV,
      "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; FunWebProducts; .NET CLR 1.1.4322; InfoPath.1)",
      "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
      "Opera/9.80 (J2ME/MIDP; Opera Mini/4.2.14912/870; U; id) Presto/2.4.15",
      "Mozilla/5.0 (Nintendo 3DS; U; ; en) Version/1.7412.EU",
      "Mozilla/5.0 (PlayStation 4 11.00) AppleWebKit/605.1.15 (KHTML, like Gecko)",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.3.25.91 (iPhone14,5; iOS 17_4_1; en_US; en; scale=3.00; 1170x2532; 598453410)",
      "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36",
      "Mozilla/5.0 (Macintosh; U; PPC Mac OS X; en) AppleWebKit/418.9 (KHTML, like Gecko, Safari/419.3) Safari/419.3",
      "w3m/0.5.3+git20230121",
      // People's apps on the platform's HTTP stack.
      "Dalvik/2.1.0 (Linux; U; Android 9; SM-G965U Build/PPR1.180610.011)",
      "Viber/12.8.0.1 CFNetwork/1121.2.2 Darwin/19.3.0",
    ]) {
      expect(ua.classify(u), u).toMatchObject({ bot: null, automation: false, client: null });
    }
  });

  it("gives a browser-shaped UA to a bot only by a whole token, and an in-app webview to none", () => {
    const ie = "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; WOW64; Trident/4.0; SLCC2; .NET CLR 2.0.50727; Media Center PC 6.0)";
    expect(ua.classify(ie)).toMatchObject({ browser: "IE 8", bot: null, client: null });
    expect(ua.classify("LCC (+http://corpora.informatik.uni-leipzig.de/crawler_faq.html)").bot?.bot_id).toBe("lcc");
    const pinterestApp = "Mozilla/5.0 (Linux; Android 11; SM-G991B Build/RP1A.200720.012; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 Mobile Safari/537.36 [Pinterest/Android]";
    expect(ua.classify(pinterestApp)).toMatchObject({ bot: null, client: null });
    expect(ua.classify("Pinterest/0.2 (+http://www.pinterest.com/bot.html)").bot?.bot_id).toBe("pinterestbot");
    // A whole token on a browser-shaped UA still names its bot.
    expect(ua.classify(`${CHROME_WIN} GTmetrix`).bot?.bot_id).toBe("gtmetrix");
  });

  it("takes an Electron desktop app for a person's browser unless the bot its name matches is an agent", () => {
    const electron = (app: string): string =>
      `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) ${app} Chrome/120.0.6099.291 Electron/28.2.10 Safari/537.36`;
    expect(ua.classify(electron("WhatsApp/2.2348.50"))).toMatchObject({ bot: null, client: null, browser: "Electron 28" });
    expect(ua.classify(`${electron("Slack/4.35.131")} Sonic Slack_SSB/4.35.131`)).toMatchObject({ bot: null, client: null });
    expect(ua.classify(electron("Cursor/3.0.12")).bot?.bot_id).toBe("cursor");
    // Outside an Electron app the same words still name their bots.
    expect(ua.classify("WhatsApp/2.23.20.0 A").bot?.bot_id).toBe("whatsappbot");
    expect(ua.classify(`${CHROME_WIN} Sonic/1.0`).bot?.bot_id).toBe("sonic");
  });

  it("takes a browser from its engine or its platform when ua-parser-js does not know its name", () => {
    for (const u of [
      // An engine on a platform, no known browser name.
      "Mozilla/5.0 (SerenityOS; x86_64) LibWeb+LibJS/1.0 Browser/1.0",
      "Mozilla/5.0 (Haiku; x86_64) AppleWebKit/609.1 (KHTML, like Gecko) WebPositive/1.3 Version/11.1 Safari/609.1",
      "Uzbl (Webkit 1.3) (Linux i686 [i686])",
      "ELinks/0.13.2 (textmode; Linux 5.10.0-8-amd64 x86_64; 200x50-2)",
      // A known browser whose UAs carry no engine token, on its platform.
      "iCab/4.8 (Macintosh; U; Intel Mac OS X)",
      // A platform no program fetching the web runs on.
      "IBrowse/2.4 (AmigaOS 3.9; 68K)",
      "AmigaVoyager/3.4.4 (MorphOS/PPC native)",
      "Mozilla/3.0 (compatible; NetPositive/2.2.2; BeOS)",
      "Mozilla/5.0 (compatible; Arachne/1.97; DOS)",
    ]) {
      expect(ua.classify(u), u).toMatchObject({ bot: null, automation: false, client: null });
    }
    // A browser whose real UAs always carry their engine is still incomplete without it.
    expect(ua.classify("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0.0.0 Safari/537.36").client).toBe("incomplete");
    expect(ua.classify("Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0").client).toBe("incomplete");
    // A platform alone makes no browser on an ordinary OS.
    expect(ua.classify("Mozilla/4.0 (compatible; Win32; WinHttp.WinHttpRequest.5)").client).toBe("no_browser");
  });

  it("reports clients without the automation pattern when asked to (leave-one-list-out evaluation)", () => {
    const noPattern = createUaClassifier(emptyBotClassifier(), 10, { automationPattern: false });
    expect(noPattern.classify("python-requests/2.32.3")).toMatchObject({ automation: false, client: "library" });
    expect(noPattern.classify(HEADLESS)).toMatchObject({ automation: false });
  });

  it("attaches the registry's bot match with its verification data", () => {
    const info = ua.classify("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)");
    expect(info.bot).toMatchObject({ bot_id: "googlebot", bot_operator: "Google", verification: { range_ids: ["googlebot"], rdns_masks: ["crawl-***.googlebot.com"] } });
    expect(info.automation).toBe(false);
    expect(info.device).toBeNull();
  });

  it("flags automation and keeps the bot match the registry has for it", () => {
    expect(ua.classify("curl/8.5.0")).toMatchObject({ automation: true, bot: { bot_id: "curl" } });
    expect(ua.classify(HEADLESS)).toMatchObject({ automation: true, bot: null, browser: "Chrome Headless 131" });
    expect(ua.classify("python-requests/2.32.3").automation).toBe(true);
    expect(ua.classify("Go-http-client/2.0").automation).toBe(true);
  });

  it("answers every string with exactly one of browser, bot, automation or a client tell", () => {
    const fresh = createUaClassifier(compileBotRegistry(BOTS), 1);
    const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,12}(\/[0-9.]{1,8})?$/);
    const uaLike = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.array(token, { maxLength: 8 }).map((t) => t.join(" ")),
      fc.tuple(fc.constantFrom(CHROME_WIN, SAFARI_MAC, FIREFOX_LINUX, "Mozilla/5.0"), token).map(([b, t]) => `${b} ${t}`),
    );
    fc.assert(
      fc.property(uaLike, (u) => {
        const info = fresh.classify(u);
        expect(Object.isFrozen(info)).toBe(true);
        if (info.client !== null) {
          expect(CLIENT_TELLS).toContain(info.client);
          expect(info.bot).toBeNull();
          expect(info.automation).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("returns the same frozen object for a cached UA and evicts the oldest past the limit", () => {
    const first = ua.classify(CHROME_WIN);
    expect(ua.classify(CHROME_WIN)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const small = createUaClassifier(emptyBotClassifier(), 2);
    const a = small.classify(CHROME_WIN);
    small.classify(SAFARI_MAC);
    expect(small.classify(CHROME_WIN)).toBe(a);
    small.classify(FIREFOX_LINUX); // evicts CHROME_WIN (oldest)
    const again = small.classify(CHROME_WIN);
    expect(again).not.toBe(a);
    expect(again).toEqual(a);
    expect(() => createUaClassifier(emptyBotClassifier(), 0)).toThrow(/cacheSize/);
  });
});
