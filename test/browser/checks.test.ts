import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";

/**
 * The dashboard's Checks page in Debian's Chromium against the real server: sign in, find a check
 * in the list, mark it spam with its button, and see the org's next similar check score higher
 * (and the model panel count the label). With FS_CHECKS_SCREENSHOT=<path> it saves the page as a
 * PNG (docs/dashboard-checks.png is made this way).
 */

const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

const PITCH = "Hello, we supply premium bamboo flooring and decking for hotels and offices at factory prices. Reply to this message for our catalogue and a free sample pack.";
const SIMILAR = "Dear manager, we offer premium bamboo flooring and decking at factory prices for hotels and offices. Reply for a free sample pack and our catalogue.";

let server!: TestServer;
let browser!: Browser;
let context!: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set FS_CHROMIUM. The browser tests do not skip.`);
  }
  server = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

async function contentScore(message: string): Promise<{ requestId: string; p: number }> {
  const r = await api(server, "POST", "/v1/check", { key: server.demo.secretKey, body: { form_id: "contact", form_data: { name: "Li Wei", message } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { requestId: r.body.metadata.request_id, p: r.body.data.signals.content.spam_probability };
}

describe("Checks page in Chromium", () => {
  it("signs in, lists a check, marks it spam, and the next similar check scores higher", async () => {
    const checked = await contentScore(PITCH);
    const before = await contentScore(SIMILAR);

    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    await page.goto(`${server.url}/dashboard/login`);
    await page.getByLabel("Secret key of your org").fill(server.demo.secretKey);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/dashboard`);

    await page.getByRole("link", { name: "Checks" }).click();
    await page.waitForURL(/\/dashboard\/checks/);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Checks");
    expect(await page.locator('[data-field="model-version"]').textContent()).toBe("global only");
    const row = page.locator(`tr[data-request-id="${checked.requestId}"]`);
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain("not kept (features only)");

    await row.getByRole("button", { name: `Spam: check ${checked.requestId}`, exact: true }).click();
    await page.waitForURL(/\/dashboard\/checks/);
    expect(await page.getByRole("status").textContent()).toContain(`Check ${checked.requestId} is marked spam`);
    const marked = page.locator(`tr[data-request-id="${checked.requestId}"]`);
    expect(await marked.locator('[data-field="label"]').textContent()).toBe("marked spam");
    expect(await marked.getByRole("button", { name: `Spam: check ${checked.requestId}`, exact: true }).getAttribute("aria-pressed")).toBe("true");
    expect(await page.locator('[data-field="fb-spam"]').textContent()).toBe("1");
    expect(await page.locator('[data-field="model-version"]').textContent()).toBe("v1");

    // The filter finds it among the checks marked spam, and only it.
    await page.getByLabel("Feedback").selectOption("spam");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/label=spam/);
    expect(await page.locator("tbody tr[data-request-id]").count()).toBe(1);

    // The org's next similar check scores higher.
    const after = await contentScore(SIMILAR);
    expect(after.p).toBeGreaterThan(before.p);
    await page.goto(`${server.url}/dashboard/checks`);
    expect(await page.locator(`tr[data-request-id="${after.requestId}"]`).textContent()).toContain("org model v1");
    if (process.env.FS_CHECKS_SCREENSHOT) await page.screenshot({ path: process.env.FS_CHECKS_SCREENSHOT, fullPage: true });
    expect(errors).toEqual([]);
  });
});
