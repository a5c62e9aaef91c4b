import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";
import { applyPolicy, resolvePolicy, type PolicyKind } from "../../src/scoring/bot-policy.js";
import { decide } from "../../src/scoring/observation.js";
import { decide as decideCheck } from "../../src/scoring/check.js";

/**
 * The bot policy's preview end to end in Debian's Chromium against the real server: hits sent
 * through the beacon's collect endpoint, a policy edited on the dashboard and previewed (the
 * figures shown are the replay API's, and those of a recomputation from the stored observations),
 * then saved, and the next hit obeys it.
 */

const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
/** In Google's published Googlebot ranges. */
const GOOGLEBOT_IP = "66.249.66.1";
/** In OpenAI's published GPTBot ranges. */
const GPTBOT_IP = "132.196.86.10";

let server!: TestServer;
let browser!: Browser;
let context!: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set FS_CHROMIUM. The browser tests do not skip.`);
  }
  // Loopback is a trusted proxy so the crawler hits below can come "from" their operators' addresses.
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

async function hit(ua: string, ip: string, path: string) {
  const r = await api(server, "POST", "/v1/collect", { key: server.demo.publishableKey, body: { action: "pageview", page: path }, headers: { "user-agent": ua, "x-forwarded-for": ip } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.observation_id as string;
}

async function observations() {
  const r = await api(server, "GET", `/v1/projects/${server.demo.projectId}/observations?limit=100`, { key: server.demo.secretKey });
  expect(r.status).toBe(200);
  return r.body.data.items as Array<{ id: string; score: number; decision: string; bot_id: string | null; bot_verified: boolean | null; ua: { bot_kind: string | null }; policy: unknown }>;
}

async function numberIn(page: Page, field: string): Promise<number> {
  return Number((await page.locator(`[data-field="${field}"]`).textContent())!.trim());
}

describe("bot policy preview in Chromium", () => {
  it("previews an edited policy with the replay's figures, then saves it and the next hit obeys", async () => {
    await hit(GOOGLEBOT, GOOGLEBOT_IP, "/docs");
    await hit(GOOGLEBOT, GOOGLEBOT_IP, "/pricing");
    await hit(GPTBOT, GPTBOT_IP, "/blog");
    await hit(CHROME, "73.15.20.30", "/");

    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    await page.goto(`${server.url}/dashboard/login`);
    await page.getByLabel(/secret key/i).fill(server.demo.secretKey);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/dashboard`);

    // Edit: search crawlers to the score (the default lets verified ones in); preview it.
    await page.getByRole("link", { name: "Bot policy" }).click();
    await page.waitForURL(/\/dashboard\/policy/);
    await page.getByLabel("search_crawler", { exact: true }).selectOption("score");
    await page.getByRole("button", { name: "Preview the change" }).click();
    await page.waitForURL(/\/dashboard\/policy\/preview$/);
    const preview = page.getByRole("status");
    expect(await preview.getByRole("heading").textContent()).toBe("Preview: this policy over the last 7 days");
    const shown = { scanned: await numberIn(page, "replay-scanned"), changed: await numberIn(page, "replay-changed") };

    // The figures are the API's for the same document...
    const proposal = { kinds: { search_crawler: "score" as const } };
    const api7 = await api(server, "POST", `/v1/projects/${server.demo.projectId}/bot-policy/replay`, { key: server.demo.secretKey, body: { policy: proposal, days: 7 } });
    expect(api7.status, JSON.stringify(api7.body)).toBe(200);
    expect(shown).toEqual({ scanned: api7.body.data.hits.scanned, changed: api7.body.data.hits.changed });
    // ...and a recomputation's from the stored observations, with the public scoring functions.
    const items = await observations();
    const policy = resolvePolicy(proposal);
    const changed = items.filter((o) => (applyPolicy(policy, { bot_id: o.bot_id, bot_kind: o.ua.bot_kind as PolicyKind | null, bot_verified: o.bot_verified })?.action ?? decide(o.score)) !== o.decision);
    expect(shown).toEqual({ scanned: items.length, changed: changed.length });
    expect(changed.map((o) => o.bot_id)).toEqual(["googlebot", "googlebot"]);
    const byKind = preview.locator('table[data-group="kind"] tbody tr');
    expect(await byKind.count()).toBe(1);
    expect(await byKind.first().getByRole("rowheader").textContent()).toBe("search_crawler");
    expect(Number(await byKind.first().locator('[data-field="count"]').textContent())).toBe(2);
    expect(await byKind.first().textContent()).toContain("allow → block");
    expect(await preview.locator('[data-field="transition"]').allTextContents()).toEqual(["allow → block"]);

    // Nothing saved yet; the form keeps the edit. Save it.
    expect((await api(server, "GET", `/v1/projects/${server.demo.projectId}/bot-policy`, { key: server.demo.secretKey })).body.data.stored).toBeNull();
    expect(await page.getByLabel("search_crawler", { exact: true }).inputValue()).toBe("score");
    await page.getByRole("button", { name: "Save the policy" }).click();
    await page.waitForURL(/\/dashboard\/policy\?project=/);
    expect(await page.getByRole("status").textContent()).toContain("The bot policy is saved; the next hit follows it.");
    expect((await api(server, "GET", `/v1/projects/${server.demo.projectId}/bot-policy`, { key: server.demo.secretKey })).body.data.stored).toEqual(proposal);

    // The next verified Googlebot hit is decided by its score: block.
    const id = await hit(GOOGLEBOT, GOOGLEBOT_IP, "/after");
    expect((await observations()).find((o) => o.id === id)).toMatchObject({ decision: "block", policy: null });
    expect(errors).toEqual([]);
  });

  it("previews check thresholds over the org's stored checks with the replay's figures and a recount", async () => {
    const check = async (message: string, email: string, ip: string, ua: string) => {
      const r = await api(server, "POST", "/v1/check", { key: server.demo.secretKey, body: { form_id: "contact", form_data: { message }, metadata: { email, ip, user_agent: ua } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    await check("We can increase your website traffic and Google ranking with our SEO services. Reply to get a free quote today!", "seo.expert@mailinator.com", "52.95.110.1", "python-requests/2.31");
    await check("Hello, my order 20931 from last week has not arrived yet. Could you tell me when it will ship? Thanks, Maria", "maria.b@gmail.com", "73.15.20.30", CHROME);
    await check("Cheap followers and likes, guaranteed results, visit our site now", "promo@example.net", "52.95.110.2", CHROME);

    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard/policy`);
    if (page.url().includes("/dashboard/login")) {
      await page.getByLabel(/secret key/i).fill(server.demo.secretKey);
      await page.keyboard.press("Enter");
      await page.waitForURL(`${server.url}/dashboard`);
      await page.goto(`${server.url}/dashboard/policy`);
    }
    await page.getByLabel("Review from").fill("0.05");
    await page.getByLabel("Block from").fill("0.3");
    await page.getByRole("button", { name: "Preview the change" }).click();
    await page.waitForURL(/\/dashboard\/policy\/preview$/);
    const preview = page.getByRole("status");
    expect(await preview.locator("#checks-preview-title").textContent()).toBe("Checks with review from 0.05 and block from 0.3");
    const shown = { scanned: await numberIn(page, "checks-scanned"), changed: await numberIn(page, "checks-changed") };

    // The API's figures for the same thresholds...
    const thresholds = { review: 0.05, block: 0.3 };
    const replay = await api(server, "POST", `/v1/projects/${server.demo.projectId}/bot-policy/replay`, { key: server.demo.secretKey, body: { thresholds, days: 7 } });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(shown).toEqual({ scanned: replay.body.data.checks.scanned, changed: replay.body.data.checks.changed });
    // ...and a recount over the stored checks with the function that decides live checks.
    const listed = await api(server, "GET", `/v1/orgs/${server.demo.orgId}/checks?limit=100`, { key: server.demo.secretKey });
    expect(listed.status).toBe(200);
    const items = listed.body.data.items as Array<{ score: number; decision: string }>;
    const changed = items.filter((c) => decideCheck(c.score, thresholds) !== c.decision);
    expect(shown).toEqual({ scanned: items.length, changed: changed.length });
    expect(changed.length).toBeGreaterThan(0);
    // The form keeps what was tried, and nothing about thresholds is stored.
    expect(await page.getByLabel("Review from").inputValue()).toBe("0.05");
    expect(await preview.locator('[data-field="check-transition"]').count()).toBeGreaterThan(0);
  });
});
