import { describe, expect, it } from "vitest";
import {
  chromiumMajor, consistencyTells, geometryTells, isDesktopUa, permissionMismatch, platformMismatch, uachMismatch, uaOs, webglMismatch,
  type ClientFacts,
} from "../../beacon/src/consistency.js";
import { chUaMismatch, headerOrder, headerTells, parseSecChUa, type ClientHeaders } from "../../src/front/beacon/header-tells.js";
import { CONSISTENCY_TELLS, SCORE_WEIGHTS, scoreHit, type HitInput } from "../../src/scoring/observation.js";
import { resolvePolicy } from "../../src/scoring/bot-policy.js";

const CHROME_LINUX = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const CHROME_WIN = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";
const SAFARI_IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
const CHROME_ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36";
const BRANDS = [{ brand: "Not:A-Brand", version: "8" }, { brand: "Chromium", version: "156" }];
const FULL = [{ brand: "Not:A-Brand", version: "8.0.0.0" }, { brand: "Chromium", version: "156.0.8078.79" }];

/** A genuine desktop Chromium in a normal window, as read under Xvfb. */
const genuine: ClientFacts = {
  ua: CHROME_LINUX,
  platform: "Linux x86_64",
  brands: BRANDS,
  uaPlatform: "Linux",
  fullVersionList: FULL,
  secure: true,
  inner: [945, 917],
  outer: [945, 1060],
  screen: [1920, 1080],
  displayMode: "browser",
  notification: "default",
  notificationQuery: "prompt",
  renderer: "",
};

describe("consistency tells (beacon)", () => {
  it("finds nothing in a genuine browser, nor in Firefox or Safari", () => {
    expect(consistencyTells(genuine)).toEqual([]);
    expect(consistencyTells({ ...genuine, ua: FIREFOX, brands: null, uaPlatform: null, fullVersionList: null, renderer: "llvmpipe (LLVM 15.0.6, 256 bits)" })).toEqual([]);
    expect(consistencyTells({ ...genuine, ua: SAFARI_IPHONE, platform: "iPhone", brands: null, uaPlatform: null, fullVersionList: null, inner: [390, 664], outer: [390, 844], screen: [390, 844] })).toEqual([]);
  });

  it("uach_mismatch: a UA override that leaves the client hints empty or different", () => {
    expect(uachMismatch({ ...genuine, fullVersionList: [] })).toBe(true); // Playwright's userAgent option
    expect(uachMismatch({ ...genuine, brands: [{ brand: " Not A;Brand", version: "99" }, ...BRANDS.slice(1), { brand: "Google Chrome", version: "156" }] })).toBe(true); // stealth's brands
    expect(uachMismatch({ ...genuine, ua: CHROME_LINUX.replace("156", "120") })).toBe(true); // another version
    expect(uachMismatch({ ...genuine, ua: CHROME_WIN })).toBe(true); // hints still say Linux
    expect(uachMismatch({ ...genuine, brands: null })).toBe(true); // a Chromium UA without userAgentData in a secure page
    expect(uachMismatch({ ...genuine, brands: null, secure: false })).toBe(false); // not exposed on plain http
    expect(uachMismatch({ ...genuine, ua: FIREFOX })).toBe(true); // Firefox does not have userAgentData
    expect(uachMismatch({ ...genuine, fullVersionList: null })).toBe(false); // not read (yet)
    expect(uachMismatch({ ...genuine, brands: [...BRANDS, { brand: "Google Chrome", version: "156" }], fullVersionList: [...FULL, { brand: "Google Chrome", version: "156.0.1" }] })).toBe(false);
    // Android's "request desktop site": a Linux UA, hints that say Android.
    expect(uachMismatch({ ...genuine, uaPlatform: "Android" })).toBe(false);
  });

  it("platform_mismatch: navigator.platform names another OS than the UA", () => {
    expect(platformMismatch(CHROME_WIN, "Win32")).toBe(false);
    expect(platformMismatch(CHROME_WIN, "Linux x86_64")).toBe(true);
    expect(platformMismatch(CHROME_LINUX, "MacIntel")).toBe(true);
    expect(platformMismatch(CHROME_ANDROID, "Linux armv81")).toBe(false);
    expect(platformMismatch(SAFARI_IPHONE, "iPhone")).toBe(false);
  });

  it("geometry: an emulated screen, a window without chrome, a window larger than its screen", () => {
    expect(geometryTells({ ...genuine, inner: [1280, 720], outer: [1280, 720], screen: [1280, 720] })).toEqual(["viewport_is_screen", "no_window_chrome"]); // patchright
    expect(geometryTells({ ...genuine, inner: [1280, 720], outer: [1288, 805], screen: [1280, 720] })).toEqual(["viewport_is_screen", "window_exceeds_screen"]); // headless=new
    // Fullscreen, kiosk and installed apps may cover the screen; phones are not judged by it.
    expect(geometryTells({ ...genuine, inner: [1920, 1080], outer: [1920, 1080], screen: [1920, 1080], displayMode: "fullscreen" })).toEqual([]);
    expect(geometryTells({ ...genuine, inner: [1920, 1080], outer: [1920, 1080], displayMode: "standalone" })).toEqual([]);
    expect(geometryTells({ ...genuine, ua: CHROME_ANDROID, inner: [412, 915], outer: [412, 915], screen: [412, 915] })).toEqual([]);
    // A maximised Windows window's invisible frame is allowed.
    expect(geometryTells({ ...genuine, ua: CHROME_WIN, inner: [1920, 929], outer: [1936, 1056], screen: [1920, 1080] })).toEqual([]);
    expect(geometryTells({ ...genuine, inner: [0, 0] })).toEqual([]);
  });

  it("permission_mismatch and webgl_mismatch", () => {
    expect(permissionMismatch("default", "prompt")).toBe(false);
    expect(permissionMismatch("default", "denied")).toBe(true); // stealth's patched query
    expect(permissionMismatch("denied", "prompt")).toBe(true); // old headless
    expect(permissionMismatch(null, "denied")).toBe(false);
    expect(webglMismatch(CHROME_WIN, "Intel Iris OpenGL Engine")).toBe(true); // a Mac renderer on Windows
    expect(webglMismatch(CHROME_LINUX, "ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11 vs_5_0 ps_5_0, D3D11)")).toBe(true);
    expect(webglMismatch(CHROME_WIN, "ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11 vs_5_0 ps_5_0, D3D11)")).toBe(false);
    expect(webglMismatch(CHROME_LINUX, "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)")).toBe(false);
  });

  it("reads UA strings the way browsers write them", () => {
    expect([uaOs(CHROME_WIN), uaOs(CHROME_LINUX), uaOs(CHROME_ANDROID), uaOs(SAFARI_IPHONE)]).toEqual(["windows", "linux", "android", "ios"]);
    expect([chromiumMajor(CHROME_LINUX), chromiumMajor(FIREFOX)]).toEqual([156, 0]);
    expect([isDesktopUa(CHROME_LINUX), isDesktopUa(CHROME_ANDROID), isDesktopUa(SAFARI_IPHONE)]).toEqual([true, false, false]);
  });
});

describe("header tells (service)", () => {
  const real: ClientHeaders = {
    userAgent: CHROME_LINUX,
    secChUa: '"Not:A-Brand";v="8", "Chromium";v="156"',
    secChUaPlatform: '"Linux"',
    secChUaMobile: "?0",
    order: ["host", "connection", "content-length", "sec-ch-ua-platform", "user-agent", "sec-ch-ua", "content-type", "sec-ch-ua-mobile", "accept", "origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "referer", "accept-encoding", "accept-language"],
  };

  it("finds nothing in what a real Chromium and a real Firefox send", () => {
    expect(headerTells(real)).toEqual([]);
    const firefox = ["host", "user-agent", "accept", "accept-language", "accept-encoding", "referer", "content-type", "content-length", "origin", "connection", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "priority"];
    expect(headerTells({ userAgent: FIREFOX, secChUa: "", secChUaPlatform: "", secChUaMobile: "", order: firefox })).toEqual([]);
  });

  it("ch_ua_mismatch: client hints that contradict the User-Agent header", () => {
    expect(parseSecChUa(real.secChUa)).toEqual([["Not:A-Brand", "8"], ["Chromium", "156"]]);
    expect(chUaMismatch({ ...real, userAgent: CHROME_WIN })).toBe(true); // platform "Linux"
    expect(chUaMismatch({ ...real, userAgent: CHROME_WIN, secChUaPlatform: '"Windows"', secChUa: '" Not A;Brand";v="99", "Chromium";v="156", "Google Chrome";v="156"' })).toBe(true);
    expect(chUaMismatch({ ...real, secChUa: '"HeadlessChrome";v="156", "Chromium";v="156"' })).toBe(true);
    expect(chUaMismatch({ ...real, userAgent: CHROME_LINUX.replace("156", "150") })).toBe(true);
    expect(chUaMismatch({ ...real, userAgent: FIREFOX })).toBe(true); // Firefox never sends them
    expect(chUaMismatch({ ...real, secChUaMobile: "?1" })).toBe(true);
    expect(chUaMismatch({ ...real, secChUaPlatform: '"Android"' })).toBe(false); // desktop site on Android
    expect(chUaMismatch({ ...real, secChUa: "" })).toBe(false); // absent on plain http
  });

  it("header_order: Accept-Language before Accept-Encoding on a Chromium UA", () => {
    const injected = ["host", "sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "accept-language", "accept", "origin", "referer", "accept-encoding"];
    expect(headerOrder({ ...real, order: injected })).toBe(true);
    expect(headerOrder({ ...real, userAgent: FIREFOX, order: injected })).toBe(false);
    expect(headerOrder({ ...real, order: ["host", "user-agent"] })).toBe(false);
  });
});

describe("consistency tells in the observation score", () => {
  const input = (tells: string[]): HitInput => ({
    ua: { browser: "Chrome 156", os: "Linux", device: "desktop" },
    automationUa: false,
    bot: null,
    clientUa: null,
    ip: null,
    tokenValid: true,
    tells,
    clientUaMismatch: false,
    rdnsVerified: null,
  });
  const policy = resolvePolicy(null);

  it("one reaches review with its own reason, two block", () => {
    for (const [tell, weight] of CONSISTENCY_TELLS) {
      const one = scoreHit(input([tell]), policy);
      expect(one.reasons, tell).toEqual([`tell:${tell}`]);
      if (weight >= 3) expect(one.decision, tell).toBe("review");
    }
    expect(scoreHit(input(["viewport_is_screen", "no_window_chrome"]), policy).decision).toBe("block");
    expect(scoreHit(input(["header_order"]), policy).decision).toBe("allow");
  });

  it("ignores names it does not know, including those of Object's prototype", () => {
    const clean = scoreHit(input([]), policy);
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      const r = scoreHit(input([name]), policy);
      expect(r.score, name).toBe(clean.score);
      expect(r.reasons, name).toEqual([]);
    }
    expect(clean.score).toBeCloseTo(1 / (1 + Math.exp(-SCORE_WEIGHTS.base)), 4);
  });
});
