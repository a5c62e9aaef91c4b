import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium as plainChromium, type Browser, type BrowserType } from "playwright-core";
import { chromium as extraChromium } from "playwright-extra";
import { chromium as patchrightChromium } from "patchright-core";
import stealth from "puppeteer-extra-plugin-stealth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBeacon } from "../../scripts/build-beacon.js";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";
import { scriptTag, startSite, type Site } from "./helpers/site.js";
import { scaled } from "../helpers/time.js";

/**
 * Stealth automation against the beacon, with FingerprintJS BotD (the open detector of the field)
 * in the same pages: each toolkit loads a page on another origin that embeds /js/fs.js (pageload
 * mode). Every automated visit must score at least `review`, and we must catch strictly more of
 * them than BotD. The controls are browsers nobody automates, opened on the page's URL from the
 * command line under Xvfb (no DevTools protocol, no webdriver): they must be `allow` with no
 * strong tell.
 */
const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const FIREFOX = "/usr/bin/firefox-esr";
const ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];
/** A desktop Chrome UA of the installed engine's major version: what scrapers send. */
let DESKTOP_UA = "";

let server!: TestServer;
let site!: Site;
const tmp = mkdtempSync(join(tmpdir(), "fs-stealth-"));

interface Observation {
  page: string;
  score: number;
  decision: string;
  reasons: string[];
  client_tells: string[];
}

beforeAll(async () => {
  for (const bin of [CHROMIUM, FIREFOX, "/usr/bin/xvfb-run"]) {
    if (!existsSync(bin)) throw new Error(`${bin} not found: install Debian's chromium, firefox-esr and xvfb (.ci/run does). The browser tests do not skip.`);
  }
  await buildBeacon();
  site = await startSite();
  server = await startServer();
  const botd = join(dirname(createRequire(import.meta.url).resolve("@fingerprintjs/botd")), "botd.esm.js");
  site.asset("/botd.esm.js", readFileSync(botd), "text/javascript");
  const probe = await plainChromium.launch({ executablePath: CHROMIUM, args: [...ARGS, "--headless"] });
  DESKTOP_UA = probe.version().replace(/^(\d+).*$/, "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/$1.0.0.0 Safari/537.36");
  await probe.close();
}, scaled(120_000));

afterAll(async () => {
  await site?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
  rmSync(tmp, { recursive: true, force: true });
});

/** A page for one visitor: the beacon in pageload mode, and BotD reporting its verdict to the site. */
function pageFor(name: string): string {
  const beacon = scriptTag(`${server.url}/js/fs.js`, { "data-fs-project-key": server.demo.publishableKey, "data-fs-mode": "pageload", "data-fs-action": "stealth" });
  const botd = `<script type="module">
    let verdict;
    try { const botd = await import("/botd.esm.js"); verdict = (await botd.load()).detect(); } catch (e) { verdict = { error: String(e) }; }
    await fetch("/report/${name}", { method: "POST", body: JSON.stringify(verdict) });
  </script>`;
  return site.page(`/visit-${name}.html`, `<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head><body><h1>Welcome</h1><p>Products.</p>${beacon}${botd}</body></html>`);
}

/** The visit's observation (by its page path), once the beacon has sent it. */
async function observationOf(name: string): Promise<Observation> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await api(server, "GET", `/v1/projects/${server.demo.projectId}/observations?limit=100`, { key: server.demo.secretKey });
    const found = (r.body.data.items as Observation[]).find((o) => o.page === `/visit-${name}.html`);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no observation for ${name}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** BotD's verdict for the visit: true when it called it a bot. */
async function botdCaught(name: string): Promise<boolean> {
  const verdict = JSON.parse(await site.report(name)) as { bot?: boolean; error?: string };
  if (verdict.error) throw new Error(`BotD failed in ${name}: ${verdict.error}`);
  return verdict.bot === true;
}

/** A toolkit's visit: launch, open the page, wait for the beacon and BotD, close. */
async function automatedVisit(name: string, launcher: BrowserType, launchArgs: string[], userAgent?: string): Promise<void> {
  const browser: Browser = await launcher.launch({ executablePath: CHROMIUM, headless: true, args: [...ARGS, ...launchArgs] });
  try {
    const context = await browser.newContext(userAgent ? { userAgent } : {});
    const page = await context.newPage();
    await page.goto(pageFor(name));
    await Promise.all([observationOf(name), site.report(name)]);
  } finally {
    await browser.close();
  }
}

/** A control visit: the browser opened on the URL from the command line under Xvfb, nobody driving it. */
async function manualVisit(name: string, command: string[]): Promise<void> {
  const url = pageFor(name);
  const child: ChildProcess = spawn("xvfb-run", ["-a", "-s", "-screen 0 1920x1080x24", ...command, url], {
    stdio: "ignore",
    detached: true,
    env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: "1" },
  });
  try {
    await Promise.all([observationOf(name), site.report(name)]);
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

const STRONG_OR_CONSISTENCY = /^(automation_detected|tell:)/;

describe("stealth automation against the beacon, BotD in the same page", () => {
  const caught: Record<string, { ours: boolean; botd: boolean }> = {};

  const toolkits: Array<[string, () => Promise<void>]> = [
    [
      "manual override (headless=new, desktop UA, webdriver hidden)",
      () => automatedVisit("manual", plainChromium, ["--headless=new", "--disable-blink-features=AutomationControlled", `--user-agent=${DESKTOP_UA}`], DESKTOP_UA),
    ],
    [
      "playwright-extra with puppeteer-extra-plugin-stealth",
      () => {
        extraChromium.use(stealth());
        return automatedVisit("stealth", extraChromium as unknown as BrowserType, [], DESKTOP_UA);
      },
    ],
    ["patchright", () => automatedVisit("patchright", patchrightChromium as unknown as BrowserType, [], DESKTOP_UA)],
  ];

  it.each(toolkits)("%s: at least review", async (label, visit) => {
    await visit();
    const name = label.startsWith("manual") ? "manual" : label.startsWith("playwright") ? "stealth" : "patchright";
    const o = await observationOf(name);
    caught[name] = { ours: o.score >= 0.45, botd: await botdCaught(name) };
    expect(o.score, `${label}: ${JSON.stringify(o)}`).toBeGreaterThanOrEqual(0.45);
    expect(["review", "block"]).toContain(o.decision);
    expect(o.reasons.some((r) => STRONG_OR_CONSISTENCY.test(r)), JSON.stringify(o.reasons)).toBe(true);
  }, scaled(120_000));

  it("catches strictly more of them than BotD", () => {
    const names = Object.keys(caught);
    expect(names.sort()).toEqual(["manual", "patchright", "stealth"]);
    const ours = names.filter((n) => caught[n]!.ours).length;
    const theirs = names.filter((n) => caught[n]!.botd).length;
    expect(ours, JSON.stringify(caught)).toBeGreaterThan(theirs);
  });

  it("control: Debian Chromium nobody automates, under Xvfb, is allowed with no strong tell", async () => {
    await manualVisit("xvfb-chromium", [CHROMIUM, ...ARGS, `--user-data-dir=${join(tmp, "chromium-profile")}`]);
    const o = await observationOf("xvfb-chromium");
    expect(o.decision, JSON.stringify(o)).toBe("allow");
    expect(o.reasons.filter((r) => STRONG_OR_CONSISTENCY.test(r))).toEqual([]);
    expect(await botdCaught("xvfb-chromium")).toBe(false);
  }, scaled(120_000));

  it("control: Firefox ESR nobody automates, under Xvfb, is allowed with no strong tell", async () => {
    const profile = join(tmp, "firefox-profile");
    mkdirSync(profile, { recursive: true }); // Firefox wants the profile folder to exist
    await manualVisit("xvfb-firefox", [FIREFOX, "--no-remote", "--profile", profile]);
    const o = await observationOf("xvfb-firefox");
    expect(o.decision, JSON.stringify(o)).toBe("allow");
    expect(o.reasons.filter((r) => STRONG_OR_CONSISTENCY.test(r))).toEqual([]);
  }, scaled(120_000));
});
