import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createBeaconProject } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s), { FS_ENABLE_METER: "true" });

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

  it("a bad address in a body is one of its problems, worded as path.ip's, beside the others (every route that takes one)", async () => {
    const site = await createBeaconProject(server);
    const notAnIp = (param: string) => ({ param, message: "'x' is not a valid IPv4 or IPv6 address." });
    const cases: Array<{ path: string; body: Record<string, unknown>; problems: Array<{ param: string; message: unknown }> }> = [
      {
        path: "/v1/check",
        body: { form_id: "", metadata: { email: 5, ip: "x", form_loaded_at: -1 } },
        problems: [{ param: "body.form_id", message: expect.any(String) }, { param: "body.metadata.email", message: expect.any(String) }, notAnIp("body.metadata.ip"), { param: "body.metadata.form_loaded_at", message: expect.any(String) }],
      },
      {
        path: "/v1/check/deep",
        body: { form_id: "", metadata: { email: 5, ip: "x", form_loaded_at: -1 } },
        problems: [{ param: "body.form_id", message: expect.any(String) }, { param: "body.metadata.email", message: expect.any(String) }, notAnIp("body.metadata.ip"), { param: "body.metadata.form_loaded_at", message: expect.any(String) }],
      },
      {
        path: "/v1/auth/check",
        body: { observation_type: "auth.logout", ip: "x", email: 5 },
        problems: [{ param: "body.observation_type", message: expect.any(String) }, notAnIp("body.ip"), { param: "body.email", message: expect.any(String) }],
      },
      {
        path: "/v1/sessions/resolve",
        body: { external_user_id: 5, observation_type: "auth.logout", ip: "x" },
        problems: [{ param: "body.external_user_id", message: expect.any(String) }, { param: "body.observation_type", message: expect.any(String) }, notAnIp("body.ip")],
      },
      {
        path: "/v1/meter",
        body: { resource: "api", identity: { ip: "x" }, limit: { max: 0, window: "1h" } },
        problems: [notAnIp("body.identity.ip"), { param: "body.limit.max", message: expect.any(String) }],
      },
    ];
    for (const { path, body, problems } of cases) {
      const r = await api(server, "POST", path, { key: site.secretKey, body });
      expect([path, r.status, r.body.error.code]).toEqual([path, 400, "VALIDATION_ERROR"]);
      expect(r.body.error.problems).toEqual(problems);
      expect(r.body.error.param).toBe(problems[0]!.param);
      expect(r.body.metadata.credits).toBe(0);
    }
    // The address is read as before: spaces around it are allowed.
    const ok = await api(server, "POST", "/v1/auth/check", { key: site.secretKey, body: { observation_type: "auth.login", ip: " 8.8.8.8 " } });
    expect(ok.status).toBe(200);
  });

  it("other errors carry no param", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: "fs_live_nope" });
    expect(r.status).toBe(401);
    expect(r.body.error).toEqual({ code: "INVALID_KEY", message: expect.any(String) });
  });
});
