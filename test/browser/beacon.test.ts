import { existsSync, readFileSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBeacon } from "../../scripts/build-beacon.js";
import { scaled } from "../helpers/time.js";
import { admin, api, startServer, type TestServer } from "../integration/helpers/server.js";
import { html, scriptTag, startSite, type Site, type SitePost } from "./helpers/site.js";

// Browser globals inside page.evaluate callbacks (the test tsconfig has no DOM lib).
declare const window: any, document: any, navigator: any, sessionStorage: any;

/** Where the browser is; FS_CHROMIUM overrides Debian's path. The suite never skips without it. */
const CHROMIUM = process.env.FS_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

/** The observation fields (docs/api.md) plus what the observations listing adds. */
interface Observation {
  id: string;
  kind: string;
  session_id: string;
  action: string;
  score: number;
  decision: string;
  reasons: string[];
  ua: Record<string, unknown>;
  bot_id: string | null;
  bot_operator: string | null;
  bot_verified: boolean | null;
}

interface Ready {
  session_id: string;
  observation_id?: string;
}

let server!: TestServer;
let site!: Site;
let browser!: Browser;
let beaconFile = "";
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set FS_CHROMIUM. The browser tests do not skip.`);
  }
  // The server serves dist/beacon/fs.js: build it before the server starts.
  beaconFile = readFileSync((await buildBeacon()).path, "utf8");
  site = await startSite();
  server = await startServer();
  browser = await launch();
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await site?.close();
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

function launch(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, ...extraArgs] });
}

/** A fresh browser context (own cookies and storage), closed after the file. */
async function newPage(b: Browser = browser): Promise<Page> {
  const ctx = await b.newContext();
  contexts.push(ctx);
  return ctx.newPage();
}

/** The service's beacon tag for the demo project (or `key`), with extra data-fs-* attributes. */
function beaconTag(attrs: Record<string, string> = {}, key = server.demo.publishableKey): string {
  return scriptTag(`${server.url}/js/fs.js`, { "data-fs-project-key": key, ...attrs });
}

/** Opens `url` and waits for `fsBeacon.ready`; rejects with the page's error if it rejects. */
async function openReady(page: Page, url: string): Promise<Ready> {
  await page.goto(url);
  await page.waitForFunction(() => window.fsBeacon !== undefined);
  return page.evaluate(() => window.fsBeacon.ready) as Promise<Ready>;
}

async function observations(projectId = server.demo.projectId): Promise<Observation[]> {
  const r = await api<{ items: Observation[]; next_cursor: string | null }>(server, "GET", `/v1/projects/${projectId}/observations`, {
    key: server.demo.secretKey,
  });
  if (r.status !== 200) throw new Error(`observations: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.items;
}

/** Polls the observations of one session until `done` holds (writes land asynchronously). */
async function sessionObservations(sessionId: string, done: (items: Observation[]) => boolean, projectId?: string): Promise<Observation[]> {
  const deadline = Date.now() + scaled(15_000);
  for (;;) {
    const items = (await observations(projectId)).filter((o) => o.session_id === sessionId);
    if (done(items)) return items;
    if (Date.now() > deadline) throw new Error(`observations of ${sessionId} never matched; got ${JSON.stringify(items)}`);
    await sleep(200);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const SESSION = /^s_[0-9A-Za-z]{22}$/;

/** Clicks the submit button `selector` and returns what the site's backend received. */
async function submit(page: Page, selector: string): Promise<SitePost> {
  const [post] = await Promise.all([site.nextPost(), page.click(selector)]);
  return post;
}

function fieldJson(post: SitePost, name = "_fs_signals"): any {
  const values = post.form.getAll(name);
  expect(values).toHaveLength(1);
  return JSON.parse(values[0]!);
}

describe("beacon script", () => {
  it("is served at /js/fs.js as JavaScript, byte for byte the build", async () => {
    const res = await fetch(`${server.url}/js/fs.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    expect(await res.text()).toBe(beaconFile);
  });

  it("without data-fs-project-key warns once and calls nothing", async () => {
    const page = await newPage();
    const warnings: string[] = [];
    const calls: string[] = [];
    page.on("console", (m) => void (m.type() === "warning" && warnings.push(m.text())));
    page.on("request", (r) => void (r.url().startsWith(server.url) && !r.url().endsWith("/js/fs.js") && calls.push(r.url())));
    await page.goto(site.page("/no-key", html("<p>hi</p>", scriptTag(`${server.url}/js/fs.js`, { "data-fs-mode": "auto" }))));
    // The script warns as it runs and stops there: no beacon object, so nothing is scheduled.
    await expect.poll(() => warnings.length, { timeout: scaled(15_000) }).toBe(1);
    expect(await page.evaluate(() => window.fsBeacon)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/data-fs-project-key/);
    expect(calls).toEqual([]);
    expect(await page.evaluate(() => window.fsBeacon)).toBeUndefined();
  });
});

describe("pageload mode", () => {
  it("records exactly one page.view with every observation field, and leaves forms alone", async () => {
    const page = await newPage();
    const form = `<form method="post" action="/pl-submit" target="sink"><input name="q" value="x"><button id="go">go</button></form>`;
    const ready = await openReady(page, site.page("/pricing", html(form, beaconTag({ "data-fs-mode": "pageload", "data-fs-action": "landing" }))));
    expect(ready.session_id).toMatch(SESSION);
    expect(ready.observation_id).toEqual(expect.any(String));

    const post = await submit(page, "#go");
    expect(post.form.has("_fs_signals")).toBe(false);

    await sessionObservations(ready.session_id, (items) => items.length >= 1);
    // A grace period, not a wait for the machine: what is checked is that nothing more happens.
    await sleep(1000); // a second page.view would have landed by now
    const items = await sessionObservations(ready.session_id, () => true);
    expect(items).toHaveLength(1);
    const o = items[0]!;
    expect(o).toMatchObject({ id: ready.observation_id, kind: "page.view", action: "landing", session_id: ready.session_id });
    expect(o.score).toBeGreaterThanOrEqual(0);
    expect(o.score).toBeLessThanOrEqual(1);
    expect(["allow", "review", "block"]).toContain(o.decision);
    expect(Array.isArray(o.reasons)).toBe(true);
    expect(o.reasons).not.toContain("client_token_missing");
    expect(Object.keys(o.ua).sort()).toEqual(["bot_kind", "bot_name", "browser", "device", "os"]);
    for (const k of ["bot_id", "bot_operator", "bot_verified"] as const) expect(o).toHaveProperty(k);
  });

  it("records one page.view when the script is added after the load event", async () => {
    const page = await newPage();
    await page.goto(site.page("/late", html("<p>late</p>")));
    await page.waitForLoadState("load");
    await page.evaluate(
      ([src, key]: string[]) => {
        const s = document.createElement("script");
        s.src = src;
        s.setAttribute("data-fs-project-key", key);
        s.setAttribute("data-fs-mode", "pageload");
        document.body.appendChild(s);
      },
      [`${server.url}/js/fs.js`, server.demo.publishableKey],
    );
    await page.waitForFunction(() => window.fsBeacon !== undefined);
    const ready = (await page.evaluate(() => window.fsBeacon.ready)) as Ready;
    await sleep(1000); // a grace period: a second page.view would have landed by now
    const items = await sessionObservations(ready.session_id, (i) => i.length >= 1);
    expect(items.map((o) => [o.kind, o.action])).toEqual([["page.view", "pageview"]]);
  });

  it("sets the _fs cookie to the session id and _fs_t to its token, and continues the session on the next page", async () => {
    const page = await newPage();
    const url = site.page("/cookie", html("<p>c</p>", beaconTag({ "data-fs-mode": "pageload" })));
    const first = await openReady(page, url);
    const cookies = await page.context().cookies(site.url);
    const fs = cookies.find((c) => c.name === "_fs");
    expect(fs).toMatchObject({ value: first.session_id, path: "/", sameSite: "Lax", secure: false });
    // max-age=31536000: about a year from now (seconds).
    expect(fs!.expires - Date.now() / 1000).toBeGreaterThan(364 * 86400);
    // The token the next page's handshake shows to continue the session (a session id alone does not).
    const fsT = cookies.find((c) => c.name === "_fs_t");
    expect(fsT).toMatchObject({ path: "/", sameSite: "Lax", secure: false });
    expect(fsT!.value.split(".")[2]).toBe(first.session_id);

    const second = await openReady(page, url);
    expect(second.session_id).toBe(first.session_id);
    expect(second.observation_id).not.toBe(first.observation_id);
    const items = await sessionObservations(first.session_id, (i) => i.length >= 2);
    expect(items.map((o) => o.kind)).toEqual(["page.view", "page.view"]);

    // A page that has the session id but not its token (a copied cookie) gets a session of its own.
    await page.context().clearCookies({ name: "_fs_t" });
    const third = await openReady(page, url);
    expect(third.session_id).not.toBe(first.session_id);
    expect((await page.context().cookies(site.url)).find((c) => c.name === "_fs")?.value).toBe(third.session_id);
  });

  it("works with cookies disabled: the session id lives in sessionStorage", async () => {
    const page = await newPage();
    // document.cookie throws, as in a sandboxed frame or with cookies blocked.
    await page.addInitScript(() => {
      Object.defineProperty(document, "cookie", {
        get() {
          throw new Error("cookies disabled");
        },
        set() {
          throw new Error("cookies disabled");
        },
      });
    });
    const ready = await openReady(page, site.page("/nocookie", html("<p>n</p>", beaconTag({ "data-fs-mode": "pageload" }))));
    expect(ready.session_id).toMatch(SESSION);
    expect(await page.evaluate(() => sessionStorage.getItem("_fs"))).toBe(ready.session_id);
    expect((await page.evaluate(() => sessionStorage.getItem("_fs_t")))?.split(".")[2]).toBe(ready.session_id);
    expect((await page.context().cookies(site.url)).map((c) => c.name)).not.toContain("_fs");
    // The next page of the tab continues the session.
    const next = await openReady(page, site.page("/nocookie-next", html("<p>n</p>", beaconTag({ "data-fs-mode": "pageload" }))));
    expect(next.session_id).toBe(ready.session_id);
  });
});

describe("forms mode", () => {
  it("injects _fs_signals for the site's backend and reports form.submit with the form's data-fs-action", async () => {
    const page = await newPage();
    // No target: the submit navigates the page away, so the report must survive it (keepalive).
    const form =
      `<form method="post" action="/contact" data-fs-action="contact">` +
      `<input name="email" value="ada@example.org"><textarea name="msg">private words</textarea>` +
      // Fields that shadow the form's own members (form.action, form.matches) must not confuse the script.
      `<input type="hidden" name="action" value="a"><input type="hidden" name="matches" value="m"><button id="send">send</button></form>`;
    const ready = await openReady(page, site.page("/contact-page", html(form, beaconTag({ "data-fs-mode": "forms", "data-fs-action": "signup" }))));
    expect(ready.observation_id).toBeUndefined();
    await page.mouse.move(5, 5);

    const post = await submit(page, "#send");
    expect(post.path).toBe("/contact");
    expect(post.form.get("email")).toBe("ada@example.org");
    const raw = post.form.get("_fs_signals")!;
    expect(raw).not.toMatch(/ada@example\.org|private words/); // field contents are never read
    const field = fieldJson(post);
    expect(field).toMatchObject({ v: 1, token: expect.any(String), session_id: ready.session_id, action: "contact" });
    expect(field.token.length).toBeGreaterThan(10);
    expect(field).not.toHaveProperty("observation_id");
    expect(field.signals).toMatchObject({
      tells: expect.arrayContaining(["webdriver", "headless_ua"]),
      fp: expect.stringMatching(/^[0-9a-f]{8,64}$/),
      timing: { elapsed_ms: expect.any(Number), interactions: expect.any(Number), rtt_ms: expect.any(Number) },
      ua: expect.stringContaining("Chrome"),
    });
    expect(field.signals.timing.interactions).toBeGreaterThan(0);

    // A valid token and session: the report carries no client_token_missing; forms mode sends no page.view.
    const items = await sessionObservations(ready.session_id, (i) => i.some((o) => o.kind === "form.submit"));
    expect(items.map((o) => [o.kind, o.action])).toEqual([["form.submit", "contact"]]);
    expect(items[0]!.reasons).not.toContain("client_token_missing");
    expect(items[0]!.reasons).toContain("automation_detected");
  });

  it("attaches to forms added later that match data-fs-form-selector, and updates the field in place", async () => {
    const page = await newPage();
    const ready = await openReady(page, site.page("/later", html("<p>spa</p>", beaconTag({ "data-fs-mode": "forms", "data-fs-form-selector": "form.protect", "data-fs-field": "sig" }))));
    await page.evaluate(() => {
      for (const cls of ["protect", "other"]) {
        const f = document.createElement("form");
        f.className = cls;
        f.method = "post";
        f.action = "/" + cls;
        f.target = "sink";
        f.innerHTML = `<input name="n" value="1"><button id="b-${cls}">ok</button>`;
        document.body.appendChild(f);
      }
    });
    const other = await submit(page, "#b-other");
    expect([...other.form.keys()]).toEqual(["n"]);

    const first = await submit(page, "#b-protect");
    expect(fieldJson(first, "sig")).toMatchObject({ v: 1, session_id: ready.session_id, action: "pageview" });
    const second = await submit(page, "#b-protect");
    expect(second.form.getAll("sig")).toHaveLength(1); // updated, not duplicated
    expect(await page.evaluate(() => document.querySelectorAll("form.protect input[name=sig]").length)).toBe(1);
  });
});

describe("auto mode", () => {
  it("an unknown data-fs-mode falls back to auto: one page.view and form handling", async () => {
    const page = await newPage();
    const form = `<form method="post" action="/auto" target="sink"><button id="go">go</button></form>`;
    const ready = await openReady(page, site.page("/auto-page", html(form, beaconTag({ "data-fs-mode": "turbo" }))));
    expect(ready.observation_id).toEqual(expect.any(String));
    const field = fieldJson(await submit(page, "#go"));
    expect(field).toMatchObject({ v: 1, session_id: ready.session_id, observation_id: ready.observation_id, action: "pageview" });
    const items = await sessionObservations(ready.session_id, (i) => i.length >= 2);
    expect(items.map((o) => o.kind).sort()).toEqual(["form.submit", "page.view"]);
  });
});

describe("automation", () => {
  it("flags an automated Chromium with automation_detected", async () => {
    const page = await newPage();
    const ready = await openReady(page, site.page("/bot", html("<p>bot</p>", beaconTag({ "data-fs-mode": "pageload" }))));
    const tells = ((await page.evaluate(() => window.fsBeacon.signals())) as { tells: string[] }).tells;
    expect(tells).toEqual(expect.arrayContaining(["webdriver", "headless_ua", "cdp"]));
    const [o] = await sessionObservations(ready.session_id, (i) => i.length >= 1);
    expect(o!.reasons).toContain("automation_detected");
    // page.exposeFunction leaves Playwright's binding global in the page.
    await page.exposeFunction("fsTestHook", () => 1);
    expect(((await page.evaluate(() => window.fsBeacon.signals())) as { tells: string[] }).tells).toContain("playwright");
  });

  it("flags it also with --disable-blink-features=AutomationControlled (navigator.webdriver false)", async () => {
    const stealthy = await launch(["--disable-blink-features=AutomationControlled"]);
    try {
      const page = await newPage(stealthy);
      const ready = await openReady(page, site.page("/stealth", html("<p>s</p>", beaconTag({ "data-fs-mode": "pageload" }))));
      expect(await page.evaluate(() => navigator.webdriver)).toBe(false);
      const tells = ((await page.evaluate(() => window.fsBeacon.signals())) as { tells: string[] }).tells;
      expect(tells).not.toContain("webdriver");
      expect(tells).toContain("cdp");
      const [o] = await sessionObservations(ready.session_id, (i) => i.length >= 1);
      expect(o!.reasons).toContain("automation_detected");
    } finally {
      await stealthy.close();
    }
  });
});

describe("allowed origins", () => {
  it("refuses pages from origins outside the project's allowed_origins, and accepts listed ones", async () => {
    const orgId = server.demo.orgId;
    const project = await admin(server, "POST", `/v1/admin/orgs/${orgId}/projects`, { name: "origins" });
    expect(project.status).toBe(201);
    const projectId: string = project.body.data.id;
    const key = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "publishable", project_id: projectId });
    expect(key.status).toBe(201);
    const pub: string = key.body.data.key;
    const url = site.page("/origins", html("<p>o</p>", beaconTag({ "data-fs-mode": "pageload" }, pub)));

    const restrict = await admin(server, "PATCH", `/v1/admin/orgs/${orgId}/projects/${projectId}`, { allowed_origins: ["https://shop.example.com"] });
    expect(restrict.status).toBe(200);
    const refused = await newPage();
    await refused.goto(url);
    await refused.waitForFunction(() => window.fsBeacon !== undefined);
    expect(await refused.evaluate(() => window.fsBeacon.ready.then(() => "ok", () => "refused"))).toBe("refused");
    expect(await observations(projectId)).toEqual([]);

    const allow = await admin(server, "PATCH", `/v1/admin/orgs/${orgId}/projects/${projectId}`, { allowed_origins: [site.url] });
    expect(allow.status).toBe(200);
    const ready = await openReady(await newPage(), url);
    const items = await sessionObservations(ready.session_id, (i) => i.length >= 1, projectId);
    expect(items.map((o) => o.kind)).toEqual(["page.view"]);
  });
});

describe("demo page", () => {
  it("puts the form first; shows this visit's page.view in words, then the submission's verdict, its reasons and the injected signals", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/demo`);
    // The form comes before the observation on the page.
    expect(await page.evaluate(() => !!(document.querySelector("form")!.compareDocumentPosition(document.getElementById("obs")!) & 4 /* DOCUMENT_POSITION_FOLLOWING */))).toBe(true);
    await page.waitForFunction(() => document.getElementById("obs")?.textContent?.includes("A page view from"), undefined, { timeout: 15_000 });
    expect(await page.textContent("#obs > p")).toMatch(/^A page view from .+ \(risk score \d+%\)\./);
    const shown = JSON.parse((await page.textContent("#obs pre")) ?? "{}") as Observation;
    expect(shown).toMatchObject({ kind: "page.view", action: "demo" });
    await page.fill('input[name="name"]', "Ada");
    await page.fill('input[name="email"]', "ada@example.com");
    await page.fill('textarea[name="message"]', "hello, could you send me a quote for twenty licences?");
    await Promise.all([page.waitForURL(`${server.url}/demo/submit`), page.click('button[type="submit"]')]);
    expect(await page.textContent("h1")).toBe("The verdict on your submission");
    expect(await page.getAttribute("#verdict", "class")).toMatch(/^verdict (allow|review|block)$/);
    expect(await page.textContent("#verdict")).toMatch(/^(allow|review|block): this submission /);
    expect(await page.textContent("#reasons")).toContain("What the text says, as the content model reads it");
    const body = (await page.textContent("body")) ?? "";
    expect(body).toContain("token valid for this session: yes");
    expect(body).toMatch(/A form submit from .+ on \/demo/);
    expect(body).toContain('"form.submit"');
    expect(body).toContain('"contact"');
    expect(await page.textContent("#signals")).not.toContain("ada@example.com"); // the beacon never reads field contents
  });
});

