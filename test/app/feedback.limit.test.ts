import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createOrgWithKey } from "../integration/helpers/server.js";

/** POST /v1/feedback's per-org limit (FS_FEEDBACK_PER_MINUTE, docs/operations.md "Feedback and check history"). */
let server!: TestApp;
useApp((s) => (server = s), { FS_FEEDBACK_PER_MINUTE: "3" });

const feedback = (key: string, i: number) =>
  api(server, "POST", "/v1/feedback", { key, body: { label: i % 2 ? "spam" : "ham", form_data: { message: `Cheap bamboo flooring from our factory, offer number ${i}, reply for a sample.` } } });

describe("POST /v1/feedback limit", () => {
  it("refuses an org past its limit with 429 RATE_LIMITED, Retry-After and RateLimit fields, and nothing learned; another org goes on", async () => {
    const a = await createOrgWithKey(server, "pro");
    const b = await createOrgWithKey(server, "pro");
    for (let i = 0; i < 3; i++) expect((await feedback(a.key, i)).status).toBe(200);
    const refused = await feedback(a.key, 3);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit-policy")).toBe('"feedback";q=3;w=60');
    expect(refused.headers.get("ratelimit")).toMatch(/^"feedback";r=0;t=\d+$/);
    const figures = await api(server, "GET", `/v1/orgs/${a.orgId}/feedback`, { key: a.key });
    expect(figures.body.data.model_version).toBe(3);
    expect((await feedback(b.key, 0)).status).toBe(200);
  });
});
