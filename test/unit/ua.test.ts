import { describe, expect, it } from "vitest";
import { compileBotRegistry, emptyBotClassifier, type BotEntry } from "../../src/datasets/bot-registry.js";
import { createUaClassifier } from "../../src/datasets/ua.js";

const verification = { ranges: false, range_ids: [], rdns_masks: [] };
const BOTS: BotEntry[] = [
  { bot_id: "googlebot", name: "Googlebot", operator: "Google", kind: "search_crawler", patterns: ["Googlebot"], verification: { ranges: true, range_ids: ["googlebot"], rdns_masks: ["crawl-***.googlebot.com"] }, sources: ["arcjet"] },
  { bot_id: "curl", name: "curl", operator: null, kind: "tool", patterns: ["^curl/"], verification, sources: ["arcjet"] },
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

  it("gives null fields for empty and unrecognised UAs", () => {
    expect(ua.classify("")).toEqual({ browser: null, os: null, device: null, bot: null, automation: false });
    expect(ua.classify("xyzzy")).toMatchObject({ browser: null, os: null, device: null, bot: null });
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
