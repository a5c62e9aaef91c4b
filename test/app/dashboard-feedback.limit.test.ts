import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 38, finding 3: the dashboard's spam / not-spam buttons go through the request pipeline
 * (http/pipeline.ts callRoute), so POST /v1/feedback's admission counts them in the org's
 * FS_FEEDBACK_PER_MINUTE as it counts the API's labels. Before, dashboard/invoke.ts ran the
 * handler without route.admit: every dashboard label was learned, whatever the count.
 */
const LIMIT = 3;
let server!: TestApp;
useApp((s) => (server = s), { FS_FEEDBACK_PER_MINUTE: String(LIMIT) });

async function signIn(key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  expect(res.status, await res.text()).toBe(303);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const page = await (await server.fetch(`${server.url}/dashboard/checks`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  expect(csrf, page).toBeTruthy();
  return { cookie, csrf: csrf! };
}

/** A check of the org's history (kept by default), for the buttons to label. */
async function check(key: string, i: number): Promise<string> {
  const r = await api(server, "POST", "/v1/check", {
    key,
    body: {
      form_id: "contact",
      form_data: { message: `Cheap bamboo flooring from our factory, offer number ${i}, reply for a sample.` },
      metadata: { ip: "73.15.20.30" },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.metadata.request_id;
}

/** Presses a spam / not-spam button; the page the browser lands on (the flash says what happened). */
async function press(s: { cookie: string; csrf: string }, requestId: string, label: "spam" | "ham"): Promise<string> {
  const res = await server.fetch(`${server.url}/dashboard/checks/feedback`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url, cookie: s.cookie },
    body: new URLSearchParams({ csrf: s.csrf, request_id: requestId, label, back: "/dashboard/checks" }).toString(),
  });
  expect(res.status).toBe(200);
  return res.text();
}

const apiFeedback = (key: string, i: number) =>
  api(server, "POST", "/v1/feedback", {
    key,
    body: { label: i % 2 ? "spam" : "ham", form_data: { message: `Cheap bamboo flooring from our factory, offer number ${i}, reply for a sample.` } },
  });

const modelVersion = async (org: { orgId: string; key: string }): Promise<number> =>
  (await api(server, "GET", `/v1/orgs/${org.orgId}/feedback`, { key: org.key })).body.data.model_version;

describe("dashboard feedback in FS_FEEDBACK_PER_MINUTE", () => {
  it("refuses the dashboard label past the limit, and nothing more is learned", async () => {
    const org = await createOrgWithKey(server, "pro");
    const ids: string[] = [];
    for (let i = 0; i <= LIMIT; i++) ids.push(await check(org.key, i));
    const s = await signIn(org.key);
    for (let i = 0; i < LIMIT; i++)
      expect(await press(s, ids[i]!, i % 2 ? "spam" : "ham")).toMatch(/the org&#39;s model learned it|the org's model learned it/);
    const refused = await press(s, ids[LIMIT]!, "spam");
    expect(refused).toMatch(/Too much feedback for this org: at most 3 every 60 s/);
    expect(await modelVersion(org)).toBe(LIMIT);
  });

  it("counts API feedback and dashboard labels together", async () => {
    const org = await createOrgWithKey(server, "pro");
    const id = await check(org.key, 0);
    const later = await check(org.key, 1);
    for (let i = 0; i < LIMIT - 1; i++) expect((await apiFeedback(org.key, i)).status).toBe(200);
    const s = await signIn(org.key);
    expect(await press(s, id, "spam")).toMatch(/model learned it/);
    // The limit is reached by both together: the API and the dashboard are refused alike.
    const api429 = await apiFeedback(org.key, LIMIT);
    expect(api429.status).toBe(429);
    expect(api429.body.error.code).toBe("RATE_LIMITED");
    expect(await press(s, later, "ham")).toMatch(/Too much feedback for this org/);
    expect(await modelVersion(org)).toBe(LIMIT);
  });
});
