import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("VALIDATION_ERROR names the input at fault", () => {
  it("a body with several problems: error.param is the first, error.problems has every one", async () => {
    const r = await admin(server, "POST", "/v1/admin/orgs", { name: 5, plan: "gold", extra: true });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    const problems = r.body.error.problems as Array<{ param: string; message: string }>;
    expect(problems.length).toBeGreaterThanOrEqual(2);
    expect(problems.map((p) => p.param)).toEqual(expect.arrayContaining(["body.name", "body.plan"]));
    expect(r.body.error.param).toBe(problems[0]!.param);
    expect(r.body.error.message).toBe(`${problems[0]!.param}: ${problems[0]!.message} (and ${problems.length - 1} more: see error.problems)`);
  });

  it("a path and a query value are read by their schemas: error.param and problems, as a body's", async () => {
    const path = await api(server, "GET", "/v1/ip/not-an-ip", { key: server.demo.secretKey });
    expect(path.status).toBe(400);
    expect(path.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "path.ip" });
    expect(path.body.error.problems).toEqual([{ param: "path.ip", message: "'not-an-ip' is not a valid IPv4 or IPv6 address." }]);
    const query = await api(server, "GET", "/v1/ip/8.8.8.8?include=weather", { key: server.demo.secretKey });
    expect(query.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "query.include" });
    expect(query.body.error.problems).toEqual([{ param: "query.include", message: expect.stringMatching(/^unknown dataset 'weather'/) }]);
  });

  it("other errors carry no param", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: "fs_live_nope" });
    expect(r.status).toBe(401);
    expect(r.body.error).toEqual({ code: "INVALID_KEY", message: expect.any(String) });
  });
});
