import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * The mission rule "whatever a client without a secret key can reach is bounded per client", on
 * the demo (FS_DEMO): POST /demo/submit runs a full form check for the demo org for anyone, and
 * GET /demo and /demo/observations read the demo project's observations. Each client address
 * (X-Forwarded-For only from a trusted proxy) gets FS_DEMO_SUBMIT_LIMIT submissions and
 * FS_DEMO_READ_LIMIT page requests a minute, then 429 RATE_LIMITED; other addresses are still
 * answered. Small limits, so a refill (one every 20 s and 12 s) cannot blur the counts.
 *
 * GET /v1/challenge, with a publishable key (public), signs a challenge on the front thread:
 * it counts against the beacon's per-address limit (FS_BEACON_ADDRESS_LIMIT) as the writes do.
 */

const SUBMITS = 3;
const READS = 5;
const BEACON = 4;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

let app!: TestApp;
// Loopback (the test's default peer) is the trusted proxy, so each request can name its client.
useApp((a) => (app = a), {
  FS_TRUSTED_PROXIES: "127.0.0.1,::1",
  FS_DEMO_SUBMIT_LIMIT: String(SUBMITS),
  FS_DEMO_READ_LIMIT: String(READS),
  FS_BEACON_ADDRESS_LIMIT: String(BEACON),
  // The submission waits this long for its report: far more than a loaded machine takes, so the
  // late report below is shown however slow the store is.
  FS_DEMO_REPORT_WAIT_MS: "60000",
});

function submit(client: { forwardedFor?: string; peer?: string }, fields: Record<string, string> = {}): Promise<Response> {
  const form = new URLSearchParams({ name: "Ada", email: "ada@gmail.com", message: "Hello, could you send me a quote for twenty licences?", ...fields });
  return app.fetch(`${app.url}/demo/submit`, {
    method: "POST",
    peer: client.peer,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "user-agent": FIREFOX,
      ...(client.forwardedFor ? { "x-forwarded-for": client.forwardedFor } : {}),
    },
    body: form.toString(),
  });
}

/** Checks a refusal: 429 in the envelope, as GET /openapi.json documents it, with its headers. */
async function expectRefused(r: Response, method: string, path: string, policy: string, limit: number): Promise<void> {
  expect(r.status).toBe(429);
  const body = (await r.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("RATE_LIMITED");
  expect(body.error.message).toMatch(/client address/);
  expect(app.contract.check(method, path, 429, body)).toBeNull();
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(r.headers.get("ratelimit-policy")).toBe(`"${policy}";q=${limit};w=60`);
  expect(r.headers.get("ratelimit")).toMatch(new RegExp(`^"${policy}";r=0;t=\\d+$`));
}

describe("POST /demo/submit", () => {
  it("refuses a flood from one client address past FS_DEMO_SUBMIT_LIMIT, while another address still gets its verdict", async () => {
    const statuses: number[] = [];
    let refused: Response | null = null;
    for (let i = 0; i < SUBMITS + 3; i++) {
      const r = await submit({ forwardedFor: "203.0.113.7" });
      statuses.push(r.status);
      if (r.status === 200) expect(await r.text()).toContain('id="verdict"');
      else refused ??= r;
    }
    expect(statuses.slice(0, SUBMITS)).toEqual(Array(SUBMITS).fill(200));
    expect(statuses.filter((s) => s !== 200).length).toBeGreaterThanOrEqual(2); // at most one refilled meanwhile
    await expectRefused(refused!, "POST", "/demo/submit", "submit", SUBMITS);

    const other = await submit({ forwardedFor: "198.51.100.9" });
    expect(other.status).toBe(200);
    expect(await other.text()).toContain('id="verdict"');
  });

  it("takes X-Forwarded-For only from a trusted proxy: a client naming a new address on each call is still one client", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < SUBMITS + 2; i++) statuses.push((await submit({ peer: "192.0.2.50", forwardedFor: `198.18.0.${i + 1}` })).status);
    expect(statuses.slice(0, SUBMITS)).toEqual(Array(SUBMITS).fill(200));
    expect(statuses.slice(SUBMITS)).toContain(429);
  });
});

describe("GET /demo and /demo/observations", () => {
  it("share FS_DEMO_READ_LIMIT per client address; another address is still answered", async () => {
    const client = { "x-forwarded-for": "203.0.113.20" };
    const page = await app.fetch(`${app.url}/demo`, { headers: client });
    expect(page.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < READS + 2; i++) {
      const r = await api(app, "GET", "/demo/observations?session_id=s_0000000000000000000000", { headers: client });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, READS - 1)).toEqual(Array(READS - 1).fill(200));
    expect(statuses.slice(READS - 1)).toContain(429);
    await expectRefused(await app.fetch(`${app.url}/demo`, { headers: client }), "GET", "/demo", "demo", READS);

    expect((await app.fetch(`${app.url}/demo`, { headers: { "x-forwarded-for": "198.51.100.20" } })).status).toBe(200);
    expect((await api(app, "GET", "/demo/observations?session_id=s_0000000000000000000000", { headers: { "x-forwarded-for": "198.51.100.20" } })).status).toBe(
      200,
    );
  });
});

describe("the submission's report", () => {
  it("is shown on the verdict page when it arrives after the form (the beacon sends both at once; the network may reorder them)", async () => {
    const beacon = { key: app.demo.publishableKey, headers: { "user-agent": FIREFOX, "x-forwarded-for": "203.0.113.40" } };
    const hs = (await api(app, "POST", "/v1/handshake", { ...beacon, body: {} })).body.data as { token: string; session_id: string };
    const hit = { action: "demo", token: hs.token, session_id: hs.session_id, page: "/demo" };
    const view = await api(app, "POST", "/v1/collect", { ...beacon, body: hit });
    expect(view.status).toBe(200);
    const pageView = view.body.data.observation_id as string;

    const hidden = JSON.stringify({ v: 1, token: hs.token, session_id: hs.session_id, action: "contact", observation_id: pageView, signals: {} });
    const answer = submit({ forwardedFor: "203.0.113.40" }, { _fs_signals: hidden }).then((r) => r.text());
    // The report comes later than the form (a slow network, a retransmission); the page must
    // still show it. The pause only orders the two; the submission waits for the report.
    await new Promise((r) => setTimeout(r, 700));
    const report = await api(app, "POST", "/v1/report", { ...beacon, body: { ...hit, action: "contact" } });
    expect(report.status).toBe(200);
    const html = await answer;
    expect(html).toMatch(/A form submit from .+ on \/demo/);
    expect(html).toMatch(/A page view from .+ on \/demo/);
  }, 90_000); // the submission may wait up to FS_DEMO_REPORT_WAIT_MS (60 s) for its report
});

describe("GET /v1/challenge", () => {
  it("counts against the beacon's per-address limit: refused past it, another address still served", async () => {
    const site = await createBeaconProject(app);
    const issue = (address: string) => api(app, "GET", "/v1/challenge", { key: site.publishableKey, headers: { "x-forwarded-for": address } });
    const statuses: number[] = [];
    for (let i = 0; i < BEACON + 2; i++) statuses.push((await issue("203.0.113.60")).status);
    expect(statuses.slice(0, BEACON)).toEqual(Array(BEACON).fill(200));
    expect(statuses.slice(BEACON)).toContain(429);
    const refused = await issue("203.0.113.60");
    expect(refused.body.error.code).toBe("RATE_LIMITED");
    expect(refused.headers.get("ratelimit-policy")).toBe(`"address";q=${BEACON};w=60`);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await issue("198.51.100.60")).status).toBe(200);
  });
});
