import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";

/**
 * The dashboard end to end in Debian's Chromium against the real server: sign in with the demo
 * org's secret key, read usage, block a bot kind in the bot policy, send a hit of that kind and
 * see it blocked (through the API and on the Observations page), sign out.
 *
 * With FS_DASHBOARD_SCREENSHOT=<path> it also saves the overview as a PNG (docs/dashboard.png is
 * made this way).
 */

const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/** In Google's published Googlebot ranges. */
const GOOGLEBOT_IP = "66.249.66.1";

let server!: TestServer;
let browser!: Browser;
let context!: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set FS_CHROMIUM. The browser tests do not skip.`);
  }
  // Loopback is a trusted proxy so the Googlebot hit below can come "from" Google's address.
  server = await startServer({ FS_TRUSTED_PROXIES: "127.0.0.1,::1" });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  context = await browser.newContext({ viewport: { width: 1100, height: 820 } });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

/** A verified Googlebot page view on the demo project, through the beacon's collect endpoint. */
async function googlebotHit(): Promise<{ decision: string; policy: unknown; reasons: string[] }> {
  const r = await api(server, "POST", "/v1/collect", {
    key: server.demo.publishableKey,
    body: { action: "pageview", page: "/" },
    headers: { "user-agent": GOOGLEBOT, "x-forwarded-for": GOOGLEBOT_IP },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const list = await api(server, "GET", `/v1/projects/${server.demo.projectId}/observations?limit=1`, { key: server.demo.secretKey });
  const o = list.body.data.items[0];
  expect(o.id).toBe(r.body.data.observation_id);
  return o;
}

async function field(page: Page, name: string): Promise<string> {
  return (await page.locator(`[data-field="${name}"]`).textContent())!.trim();
}

describe("dashboard in Chromium", () => {
  it("signs in, reads usage, blocks a bot kind that the next hit obeys, and signs out", async () => {
    const key = server.demo.secretKey;
    // Some usage to read: three IP lookups.
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
    const usage = (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key })).body.data;
    // The default policy lets a verified search crawler in.
    const before = await googlebotHit();
    expect(before.decision).toBe("allow");
    expect(before.reasons).toContain("policy:allow:kinds.search_crawler");

    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));

    // Signed out: the dashboard sends the browser to the sign-in page.
    await page.goto(`${server.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    // The key field has the focus: type the key and press Enter, no mouse needed.
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe("key");
    await page.keyboard.type(key);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/dashboard`);
    // Nothing of the key in the browser: not in the cookie, not in storage.
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: "fs_dash", httpOnly: true, sameSite: "Strict", secure: false });
    expect(cookies[0]!.value).not.toContain(key.slice(8));
    expect(await page.evaluate(() => (globalThis as any).localStorage.length + (globalThis as any).sessionStorage.length)).toBe(0);

    // The skip link is the keyboard's first stop on every page, and leads to the main region.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe("main");

    // Usage as the API states it.
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    expect(await field(page, "plan")).toBe(usage.plan);
    expect(Number((await field(page, "used")).replace(/,/g, ""))).toBe(usage.used);
    expect(await field(page, "remaining")).toBe(usage.remaining === null ? "unlimited" : usage.remaining.toLocaleString("en-US"));
    const chart = page.getByRole("img", { name: "Credits per day this period" });
    expect(await chart.count()).toBe(1);
    expect(await page.locator("figcaption").textContent()).toContain(`${usage.used} credits used this period`);
    if (process.env.FS_DASHBOARD_SCREENSHOT) {
      await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
      await page.screenshot({ path: process.env.FS_DASHBOARD_SCREENSHOT });
    }

    // Block search crawlers in the demo project's bot policy.
    await page.getByRole("link", { name: "Bot policy" }).click();
    await page.waitForURL(/\/dashboard\/policy/);
    await page.getByLabel("search_crawler", { exact: true }).selectOption("block");
    await page.getByRole("button", { name: "Save the policy" }).click();
    await page.waitForURL(/\/dashboard\/policy\?project=/);
    expect(await page.getByRole("status").textContent()).toContain("The bot policy is saved; the next hit follows it.");
    expect(await page.getByLabel("search_crawler", { exact: true }).inputValue()).toBe("block");

    // The next hit obeys it.
    const after = await googlebotHit();
    expect(after.decision).toBe("block");
    expect(after.policy).toEqual({ action: "block", rule: "kinds.search_crawler" });
    // The score alone says block (a verified bot is certainly a bot); the policy no longer overrides it.
    expect(after.reasons).not.toContain("policy:allow:kinds.search_crawler");

    // And the Observations page shows it, filtered by bot kind, with its reasons explained.
    await page.getByRole("link", { name: "Observations" }).click();
    await page.getByLabel("Bot kind").selectOption("search_crawler");
    await page.getByLabel("Decision").selectOption("block");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/bot_kind=search_crawler/);
    const rows = page.locator("tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("policy kinds.search_crawler");
    await rows.first().getByRole("link").click();
    await page.waitForURL(/\/dashboard\/observations\/hit\?/);
    expect(await page.locator("dl.facts").textContent()).toContain("block by rule kinds.search_crawler");
    const explained = await page.locator("main table").textContent();
    expect(explained).toContain("The bot's claim was verified");
    expect(explained).toContain("The bot is a search engine crawler");
    expect(explained).toContain('The bot registry identifies the bot as "googlebot"');

    // Sign out: the session is gone, and the old cookie opens nothing.
    const session = (await context.cookies())[0]!;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/dashboard\/login\?m=signed-out/);
    expect(await page.getByRole("status").textContent()).toContain("You are signed out.");
    expect(await context.cookies()).toHaveLength(0);
    const replay = await fetch(`${server.url}/dashboard`, { headers: { cookie: `${session.name}=${session.value}` }, redirect: "manual" });
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toBe("/dashboard/login?m=ended");
    expect(errors).toEqual([]);
  });
});
