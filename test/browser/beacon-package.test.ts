import { existsSync } from "node:fs";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBeaconPackage } from "../../scripts/build-beacon.js";
import { REPO_ROOT } from "../../src/config/index.js";
import { scaled } from "../helpers/time.js";
import { api, startServer, type TestServer } from "../integration/helpers/server.js";
import { html, startSite, type Site } from "./helpers/site.js";

const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";

let server!: TestServer;
let site!: Site;
let browser!: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package or set FS_CHROMIUM. The browser tests do not skip.`);
  await buildBeaconPackage();
  site = await startSite();
  server = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

/** A site's own script, bundled by esbuild as a customer's build would, importing the package by name. */
async function bundle(source: string): Promise<string> {
  const out = await build({ stdin: { contents: source, resolveDir: REPO_ROOT, loader: "js" }, bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
  return out.outputFiles[0]!.text;
}

describe("@fraudscore/beacon bundled into a page", () => {
  it("init({ projectKey, endpoint }) starts a session the service records, and a form carries the signals field", async () => {
    const app = await bundle(`
      import { init } from "@fraudscore/beacon";
      const beacon = init({ projectKey: ${JSON.stringify(server.demo.publishableKey)}, endpoint: ${JSON.stringify(server.url)} });
      beacon.ready.then(
        (r) => fetch("/report/ready", { method: "POST", body: JSON.stringify({ ...r, same: init({ projectKey: "x", endpoint: "y" }) === beacon }) }),
        (e) => fetch("/report/ready", { method: "POST", body: JSON.stringify({ error: String(e) }) }),
      );
    `);
    site.asset("/app.js", app, "text/javascript");
    const page = await (await browser.newContext()).newPage();
    await page.goto(site.page("/pkg", html('<form method="post" action="/signup" target="sink"><input name="email" value="a@b.example"><button id="go">go</button></form>', '<script type="module" src="/app.js"></script>')));
    const ready = JSON.parse(await site.report("ready")) as { session_id?: string; observation_id?: string; same?: boolean; error?: string };
    expect(ready.error).toBeUndefined();
    expect(ready.session_id).toMatch(/^s_[0-9A-Za-z]{22}$/);
    expect(ready.same).toBe(true);

    await expect
      .poll(
        async () => {
          const r = await api(server, "GET", `/v1/projects/${server.demo.projectId}/observations`, { key: server.demo.secretKey });
          return (r.body.data.items as Array<{ session_id: string }>).some((o) => o.session_id === ready.session_id);
        },
        { timeout: scaled(15_000) },
      )
      .toBe(true);

    const [post] = await Promise.all([site.nextPost(), page.click("#go")]);
    const field = JSON.parse(post.form.get("_fs_signals") ?? "{}") as { session_id?: string; signals?: unknown };
    expect(field.session_id).toBe(ready.session_id);
    expect(field.signals).toBeDefined();
  });
});
