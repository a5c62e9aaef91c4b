import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
// Every answer in the access log, so the test can find its own request ids there.
const METRICS_TOKEN = "scrape-only-token-0123456789";
/** prom-client's own process metrics that are gauges named `_total` (its default metrics; not ours to rename). */
const PROM_CLIENT_GAUGES_NAMED_TOTAL = new Set(["nodejs_active_resources_total", "nodejs_active_handles_total", "nodejs_active_requests_total"]);
useApp((s) => (server = s), { FS_ACCESS_LOG_SAMPLE: "1", FS_METRICS_TOKEN: METRICS_TOKEN });

async function scrape(token = ADMIN_TOKEN): Promise<{ status: number; type: string | null; text: string }> {
  const res = await server.fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** The value of one series line, e.g. `fs_pool_threads` or `x{a="b"}`; NaN when absent. */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

describe("GET /metrics", () => {
  it("is for the admin token only, with errors in the envelope", async () => {
    const none = await api(server, "GET", "/metrics");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("MISSING_KEY");
    const org = await createOrgWithKey(server);
    const wrong = await api(server, "GET", "/metrics", { key: org.key });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("INVALID_KEY");
  });

  it("takes the scrape-only FS_METRICS_TOKEN, which opens nothing else", async () => {
    const m = await scrape(METRICS_TOKEN);
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/^fs_pool_threads 1$/m);
    for (const [method, path] of [["GET", "/v1/admin/orgs"], ["POST", "/v1/admin/orgs"], ["GET", "/v1/ip/8.8.8.8"], ["GET", "/readyz"]] as const) {
      const r = await server.fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${METRICS_TOKEN}`, "content-type": "application/json" }, body: method === "POST" ? "{}" : undefined });
      const body = (await r.json()) as { data?: unknown };
      if (path === "/readyz") expect(body.data ?? body, path).not.toHaveProperty("datasets");
      else expect(r.status, `${method} ${path}`).toBe(401);
    }
  });

  it("follows Prometheus' naming and typing conventions", async () => {
    // Something in every family first: a 405 among them, counted under its route, not "unmatched".
    expect((await server.fetch(`${server.url}/v1/ip/8.8.8.8`, { method: "DELETE" })).status).toBe(405);
    const { text } = await scrape(METRICS_TOKEN);
    expect(text).toMatch(/fs_http_request_duration_seconds_count\{route="\/v1\/ip\/:ip",method="DELETE",status="405"\} [1-9]/);
    const types = new Map<string, string>();
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
    expect(types.size).toBeGreaterThan(20);
    for (const [name, type] of types) {
      expect(name, name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
      expect(["counter", "gauge", "histogram", "summary"], name).toContain(type);
      // Counters end in _total; nothing else does, nor ends in a histogram or summary's own suffixes.
      if (type === "counter") expect(name, name).toMatch(/_total$/);
      else if (!PROM_CLIENT_GAUGES_NAMED_TOTAL.has(name)) expect(name, name).not.toMatch(/_(total|count|sum|bucket)$/);
    }
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
      expect(m, line).not.toBeNull();
      const series = m![1]!;
      const family = types.has(series) ? series : series.replace(/_(bucket|sum|count)$/, "");
      const type = types.get(family);
      expect(type, `${line}: no # TYPE for ${family}`).toBeDefined();
      if (series !== family) expect(["histogram", "summary"], line).toContain(type);
      if (/[{,]le="/.test(m![2] ?? "")) expect(type, line).toBe("histogram");
      if (/[{,]quantile="/.test(m![2] ?? "")) expect(type, line).toBe("summary");
      // A float as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case).
      expect(!Number.isNaN(Number(m![3])) || /^(nan|[+-]?inf)$/i.test(m![3]!), line).toBe(true);
    }
    expect(types.get("fs_pool_tasks_completed_total")).toBe("counter");
    expect(types.get("fs_pool_task_seconds")).toBe("summary");
    expect(text).toMatch(/^fs_pool_task_seconds_count\{phase="run"\} \d+$/m);
  });

  it("counts answers per route, method and status, and reports pool, writer, journals and datasets", async () => {
    const org = await createOrgWithKey(server);
    const before = await scrape();
    const ok = 'fs_http_request_duration_seconds_count{route="/v1/ip/:ip",method="GET",status="200"}';
    const bad = 'fs_http_request_duration_seconds_count{route="/v1/ip/:ip",method="GET",status="400"}';
    const was = (s: string) => (Number.isNaN(value(before.text, s)) ? 0 : value(before.text, s));
    for (let i = 0; i < 5; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/not-an-ip", { key: org.key })).status).toBe(400);
    expect((await api(server, "GET", "/v1/nothing-here")).status).toBe(404);

    const after = await scrape();
    expect(after.status).toBe(200);
    expect(after.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(value(after.text, ok) - was(ok)).toBe(5);
    expect(value(after.text, bad) - was(bad)).toBe(3);
    expect(after.text).toMatch(/fs_http_request_duration_seconds_count\{route="unmatched",method="",status="404"\} \d+/);
    // Every bucket line is cumulative and ends with +Inf equal to the count.
    expect(value(after.text, 'fs_http_request_duration_seconds_bucket{le="+Inf",route="/v1/ip/:ip",method="GET",status="200"}')).toBe(value(after.text, ok));

    expect(value(after.text, "fs_pool_threads")).toBe(1);
    expect(value(after.text, "fs_pool_queue_depth")).toBe(0);
    expect(value(after.text, 'fs_pool_task_seconds{phase="run",quantile="0.5"}')).toBeGreaterThanOrEqual(0);
    expect(value(after.text, "fs_pool_tasks_completed_total")).toBeGreaterThanOrEqual(0);
    // The writer committed at least the org and key creation.
    expect(value(after.text, "fs_writer_commit_intents_count")).toBeGreaterThan(0);
    expect(value(after.text, "fs_writer_commit_seconds_count")).toBe(value(after.text, "fs_writer_commit_intents_count"));
    expect(value(after.text, 'fs_journal_backlog_records{journal="charges"}')).toBeGreaterThanOrEqual(0);
    expect(value(after.text, 'fs_journal_backlog_records{journal="observations"}')).toBeGreaterThanOrEqual(0);
    // The shipped snapshot is dated: each family's age is a real, positive number of seconds.
    const cloud = value(after.text, 'fs_dataset_age_seconds{family="cloud"}');
    expect(cloud).toBeGreaterThan(0);
    expect(cloud).toBeLessThan(10 * 365 * 86_400);
    expect(value(after.text, "fs_dataset_built_timestamp_seconds")).toBeGreaterThan(1.7e9);
    expect(after.text).toMatch(/^process_cpu_user_seconds_total \d/m);
  });

  it("counts credits charged by route and plan, check decisions, and quota refusals by plan", async () => {
    const pro = await createOrgWithKey(server, "pro");
    const free = await createOrgWithKey(server, "free");
    await admin(server, "POST", `/v1/admin/orgs/${free.orgId}/usage/adjust`, { credits: 10_000, reason: "test: use up the free quota" });
    const before = (await scrape()).text;
    const was = (s: string) => (Number.isNaN(value(before, s)) ? 0 : value(before, s));
    const ipPro = 'fs_credits_charged_total{route="/v1/ip/:ip",method="GET",plan="pro"}';
    const checkPro = 'fs_credits_charged_total{route="/v1/check",method="POST",plan="pro"}';
    const refusedFree = 'fs_quota_refusals_total{plan="free"}';
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: pro.key })).status).toBe(200);
    const check = await api(server, "POST", "/v1/check", { key: pro.key, body: { form_id: "contact", metadata: { email: "maria@example.com", ip: "73.15.20.30" } } });
    expect(check.status).toBe(200);
    const decision = `fs_check_decisions_total{route="/v1/check",method="POST",decision="${check.body.data.decision}"}`;
    for (let i = 0; i < 2; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: free.key })).status).toBe(429);
    const after = (await scrape()).text;
    expect(value(after, ipPro) - was(ipPro)).toBe(3);
    expect(value(after, checkPro) - was(checkPro)).toBe(2);
    expect(value(after, decision) - was(decision)).toBe(1);
    expect(value(after, refusedFree) - was(refusedFree)).toBe(2);
  });

  it("the journal backlog drains once the ledger forwarder has sent the charges", async () => {
    const org = await createOrgWithKey(server);
    for (let i = 0; i < 4; i++) await api(server, "GET", "/v1/ip/1.1.1.1", { key: org.key });
    // The usage read goes through the writer after the forwarder flushed (AppDeps.flushLedger).
    await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key });
    const m = await scrape();
    expect(value(m.text, 'fs_journal_backlog_records{journal="charges"}')).toBe(0);
  });
});

describe("access log", () => {
  it("writes one pino line per sampled answer, with its request id, route, status and time", async () => {
    const id = `acc-${Date.now()}`;
    const res = await server.fetch(`${server.url}/v1/ip/8.8.8.8`, { headers: { "x-request-id": id } });
    expect(res.status).toBe(401);
    const lineOf = () => server.output().split("\n").find((l) => l.includes(`"request_id":"${id}"`));
    await expect.poll(lineOf).toBeDefined();
    const line = lineOf();
    const rec = JSON.parse(line!);
    expect(rec).toMatchObject({ level: "info", component: "access", msg: "request", route: "GET /v1/ip/:ip", status: 401 });
    expect(rec.ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(rec.time)).toBeGreaterThan(0);
  });
});
