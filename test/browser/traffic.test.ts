import { existsSync, readFileSync } from "node:fs";
import { parse } from "csv-parse/sync";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";

/**
 * The dashboard's Traffic page end to end in Debian's Chromium against the real server: beacon
 * hits of a human and of a bot, then sign in, read the counts, change the time range, and
 * download a table as CSV.
 */

const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/** In Google's published Googlebot ranges. */
const GOOGLEBOT_IP = "66.249.66.1";
/** A residential broadband address. */
const HOME_IP = "73.15.20.30";
const DAY = 86_400_000;

let server!: TestServer;
let browser!: Browser;
let context!: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set FS_CHROMIUM. The browser tests do not skip.`,
    );
  }
  // Loopback is a trusted proxy so the hits below can come "from" their addresses.
  server = await startServer({ FS_TRUSTED_PROXIES: "127.0.0.1,::1" });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  context = await browser.newContext({ viewport: { width: 1100, height: 820 }, acceptDownloads: true });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

/** A page view on the demo project through the beacon's collect endpoint, at `at` (the test clock). */
async function hit(ua: string, ip: string, at: number): Promise<void> {
  const r = await api(server, "POST", "/v1/collect", {
    key: server.demo.publishableKey,
    body: { action: "pageview", page: "/" },
    headers: {
      "user-agent": ua,
      "x-forwarded-for": ip,
      "accept-encoding": "gzip, deflate, br",
      "accept-language": "en-US,en;q=0.9",
      "x-fs-test-now": String(at),
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function field(page: Page, name: string): Promise<string> {
  return (await page.locator(`[data-field="${name}"]`).textContent())!.trim();
}

/** The rows of a top table on the page: its first cell -> its hits. */
async function tableHits(page: Page, table: string): Promise<Record<string, number>> {
  const rows = await page
    .locator(`table[data-table="${table}"] tbody tr`)
    .evaluateAll((trs) => trs.map((tr) => [...(tr as any).children].map((c: any) => c.textContent.trim())));
  return Object.fromEntries(rows.map((cells: string[]) => [cells[0], Number(cells[cells.length - 3])]));
}

describe("the Traffic page in Chromium", () => {
  it("shows a human's and a bot's hits, follows a change of range, and downloads a table as CSV", async () => {
    const now = Date.now();
    // One human hit three days ago (in 7 days, not in 24 hours), then two human hits and a verified Googlebot now.
    await hit(CHROME, HOME_IP, now - 3 * DAY);
    await hit(CHROME, HOME_IP, now - 60_000);
    await hit(CHROME, HOME_IP, now - 30_000);
    await hit(GOOGLEBOT, GOOGLEBOT_IP, now - 10_000);

    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));

    await page.goto(`${server.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await page.locator("#key").fill(server.demo.secretKey);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/dashboard`);

    // The last 24 hours, by default.
    await page.getByRole("link", { name: "Traffic" }).click();
    await page.waitForURL(/\/dashboard\/traffic/);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Traffic");
    expect(await page.getByLabel("Time range", { exact: true }).inputValue()).toBe("24h");
    expect(await field(page, "hits")).toBe("3");
    expect(await tableHits(page, "kinds")).toEqual({ human: 2, search_crawler: 1 });
    expect(await tableHits(page, "bots")).toEqual({ googlebot: 1 });
    expect(await tableHits(page, "countries")).toMatchObject({ US: 3 });
    expect(await page.getByRole("img", { name: "Hits over time by decision" }).count()).toBe(1);

    // The last 7 days include the older hit.
    await page.getByLabel("Time range", { exact: true }).selectOption("7d");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/range=7d/);
    expect(await field(page, "hits")).toBe("4");
    expect(await tableHits(page, "kinds")).toEqual({ human: 3, search_crawler: 1 });
    // Days now: the accessible table of the series has one row per day with the hits.
    const perDay = await page
      .locator('table[data-table="decisions"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Number((tr as any).children[4].textContent)));
    expect(perDay.reduce((a, b) => a + b, 0)).toBe(4);
    expect(perDay.length).toBeGreaterThanOrEqual(7);

    // Download the kinds as CSV.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download hits by kind (CSV)" }).click()]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^traffic-${server.demo.projectId}-kinds-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    const rows = parse(readFileSync((await download.path())!, "utf8"), { columns: true }) as Array<Record<string, string>>;
    expect(rows).toEqual([
      { kind: "human", hits: "3", share: "0.75", blocked: "0" },
      { kind: "search_crawler", hits: "1", share: "0.25", blocked: "0" },
    ]);
    // Its headers, through the browser's own session.
    const href = await page.getByRole("link", { name: "Download hits over time (CSV)" }).getAttribute("href");
    const answer = await context.request.get(`${server.url}${href}`);
    expect(answer.status()).toBe(200);
    expect(answer.headers()["content-type"]).toBe("text/csv; charset=utf-8");
    expect(answer.headers()["content-disposition"]).toMatch(/^attachment; filename="traffic-.*-decisions-.*\.csv"$/);
    const series = parse(await answer.text(), { columns: true }) as Array<Record<string, string>>;
    expect(series.reduce((a, r) => a + Number(r.total), 0)).toBe(4);
    expect(Object.keys(series[0]!)).toEqual(["start", "allow", "review", "block", "total"]);

    // From and to dates: the day of the older hit alone.
    const day = new Date(now - 3 * DAY).toISOString().slice(0, 10);
    await page.getByLabel("Time range", { exact: true }).selectOption("dates");
    await page.getByLabel("From (UTC)").fill(day);
    await page.getByLabel("To (UTC, inclusive)").fill(day);
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/range=dates/);
    expect(await field(page, "hits")).toBe("1");
    expect(errors).toEqual([]);
  });
});
