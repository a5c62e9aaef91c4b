import { describe, expect, it } from "vitest";
import { buildHit, fieldValue, globalTells, hashHex, isDesktopChrome, readConfig, sessionCookie, sessionFromCookie, tokenCookie, tokenFromCookie, type Signals } from "../../beacon/src/core.js";

const ORIGIN = "https://fs.example.com";
const attrs = (a: Record<string, string>) => (name: string) => a[name] ?? null;
const SID = "s_abcdefghijABCDEFGHIJ01";
const signals: Signals = { tells: ["webdriver"], fp: "00ff", timing: { elapsed_ms: 5, interactions: 1, rtt_ms: 3 }, ua: "UA" };

describe("readConfig", () => {
  it("returns null without a project key (also an empty one)", () => {
    expect(readConfig(attrs({}), ORIGIN)).toBeNull();
    expect(readConfig(attrs({ "data-fs-project-key": "  " }), ORIGIN)).toBeNull();
  });

  it("applies every documented data-fs-* default from the script's origin", () => {
    expect(readConfig(attrs({ "data-fs-project-key": "fs_pub_live_x" }), ORIGIN)).toEqual({
      key: "fs_pub_live_x",
      pageload: true,
      forms: true,
      action: "pageview",
      formSelector: "form",
      field: "_fs_signals",
      initUrl: `${ORIGIN}/v1/handshake`,
      collectUrl: `${ORIGIN}/v1/collect`,
      probeUrl: `${ORIGIN}/v1/probe`,
      reportUrl: `${ORIGIN}/v1/report`,
    });
  });

  it("reads every attribute", () => {
    const cfg = readConfig(
      attrs({
        "data-fs-project-key": "k",
        "data-fs-mode": "forms",
        "data-fs-action": "signup",
        "data-fs-form-selector": "form.x",
        "data-fs-field": "sig",
        "data-fs-init-url": "/hs",
        "data-fs-collect-url": "/c",
        "data-fs-probe-url": "/p",
      }),
      ORIGIN,
    );
    expect(cfg).toMatchObject({ pageload: false, forms: true, action: "signup", formSelector: "form.x", field: "sig", initUrl: "/hs", collectUrl: "/c", probeUrl: "/p" });
  });

  it.each([
    ["pageload", true, false],
    ["forms", false, true],
    ["auto", true, true],
    ["FORMS", false, true],
    ["turbo", true, true],
    ["", true, true],
  ])("mode %j: pageview %s, forms %s", (mode, pageload, forms) => {
    expect(readConfig(attrs({ "data-fs-project-key": "k", "data-fs-mode": mode }), ORIGIN)).toMatchObject({ pageload, forms });
  });
});

describe("hashHex", () => {
  it("gives 14 stable hex characters and differs on different input", () => {
    expect(hashHex("a")).toMatch(/^[0-9a-f]{14}$/);
    expect(hashHex("a")).toBe(hashHex("a"));
    expect(hashHex("a")).not.toBe(hashHex("b"));
    expect(hashHex("")).toMatch(/^[0-9a-f]{14}$/);
  });
});

describe("session id", () => {
  it("reads a well-formed _fs cookie and ignores others", () => {
    expect(sessionFromCookie(`a=1; _fs=${SID}; b=2`)).toBe(SID);
    expect(sessionFromCookie(`_fs=${SID}`)).toBe(SID);
    expect(sessionFromCookie("x_fs=s_abcdefghijABCDEFGHIJ01")).toBeUndefined();
    expect(sessionFromCookie("_fs=s_short")).toBeUndefined();
    expect(sessionFromCookie("")).toBeUndefined();
  });

  it("writes the cookie of beacon/README.md, Secure on https only", () => {
    expect(sessionCookie(SID, false)).toBe(`_fs=${SID}; path=/; max-age=31536000; SameSite=Lax`);
    expect(sessionCookie(SID, true)).toBe(`_fs=${SID}; path=/; max-age=31536000; SameSite=Lax; Secure`);
  });

  it("keeps the session's token in _fs_t, next to _fs and not confused with it", () => {
    const token = `v1.prj_8Hq2LmT7aZ3kXw9B.${SID}.mhz3k2p0.Zk3pQ9xL2mT7aW4b-_`;
    expect(tokenFromCookie(`_fs=${SID}; _fs_t=${token}`)).toBe(token);
    expect(sessionFromCookie(`_fs_t=${token}; _fs=${SID}`)).toBe(SID);
    expect(tokenFromCookie(`_fs=${SID}`)).toBeUndefined();
    expect(tokenFromCookie("_fs_t=<script>")).toBeUndefined();
    expect(tokenCookie(token, true)).toBe(`_fs_t=${token}; path=/; max-age=31536000; SameSite=Lax; Secure`);
    expect(tokenCookie("", false)).toBe("_fs_t=; path=/; max-age=0");
  });
});

describe("globalTells", () => {
  it("maps driver globals to tell names", () => {
    expect(globalTells(["$cdc_asdjflasutopfhvcZLmcfl_"])).toEqual(["selenium"]);
    expect(globalTells(["__webdriver_evaluate", "__driver_evaluate", "__fxdriver_unwrapped", "__selenium_unwrapped"])).toEqual(["selenium"]);
    expect(globalTells(["__playwright__binding__", "__pwInitScripts"])).toEqual(["playwright"]);
    expect(globalTells(["__puppeteer_utility_world__"])).toEqual(["puppeteer"]);
    expect(globalTells(["__nightmare"])).toEqual(["nightmare"]);
    expect(globalTells(["callPhantom", "_phantom"])).toEqual(["phantom"]);
  });

  it("ignores ordinary page globals", () => {
    expect(globalTells(["document", "jQuery", "__NEXT_DATA__", "_gaq", "webdriverless", "phantomjsish", "$"])).toEqual([]);
  });
});

describe("isDesktopChrome", () => {
  it("is true for desktop Chrome and false for mobile or other browsers", () => {
    expect(isDesktopChrome("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")).toBe(true);
    expect(isDesktopChrome("Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36")).toBe(false);
    expect(isDesktopChrome("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")).toBe(false);
  });
});

describe("payloads", () => {
  it("builds a hit with the README's members", () => {
    expect(buildHit("page.view", "pageview", { token: "v1.t", session_id: SID }, "/pricing", signals)).toEqual({
      kind: "page.view",
      action: "pageview",
      token: "v1.t",
      session_id: SID,
      page: "/pricing",
      signals,
    });
  });

  it("the form field JSON drops what is not known yet", () => {
    expect(JSON.parse(fieldValue("contact", { session_id: SID }, signals))).toEqual({ v: 1, session_id: SID, action: "contact", signals });
    expect(JSON.parse(fieldValue("contact", { token: "v1.t", session_id: SID, observation_id: "obs_1" }, signals))).toEqual({
      v: 1,
      token: "v1.t",
      session_id: SID,
      action: "contact",
      observation_id: "obs_1",
      signals,
    });
  });
});
