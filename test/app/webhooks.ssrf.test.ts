import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, useApp, type TestApp } from "../helpers/app.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

// http is allowed (so a refusal below is for the address, not the scheme); private addresses are not (the default).
let server!: TestApp;
useApp((s) => (server = s), { FS_WEBHOOK_ALLOW_HTTP: "true", FS_WEBHOOK_ENDPOINTS_MAX: "20" });

const receiver = new WebhookReceiver();
beforeAll(async () => {
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
});

describe("webhook endpoints naming non-public addresses (FS_WEBHOOK_ALLOW_PRIVATE off)", () => {
  it("refuses at registration every non-public IP literal, in any spelling the URL parser reads as one, and localhost names", async () => {
    const { orgId } = await createOrgWithKey(server);
    const refused = [
      "http://127.0.0.1:8080/hook", // loopback
      "http://2130706433/hook", // 127.0.0.1 as one number
      "http://0x7f.1/hook", // 127.0.0.1 in hex, short form
      "http://017700000001/hook", // 127.0.0.1 in octal
      "http://0/hook", // 0.0.0.0, unspecified
      "http://10.0.0.5/hook", // private
      "https://192.168.1.1/hook",
      "https://172.16.0.1/hook",
      "http://169.254.169.254/latest/meta-data/", // link-local: cloud metadata
      "https://100.64.0.1/hook", // CGNAT, shared address space
      "https://224.0.0.1/hook", // multicast
      "https://240.0.0.1/hook", // reserved
      "http://[::1]/hook",
      "http://[::]/hook",
      "http://[::ffff:127.0.0.1]/hook", // IPv4-mapped
      "https://[::ffff:a9fe:a9fe]/hook",
      "https://[64:ff9b::a9fe:a9fe]/hook", // 169.254.169.254 through NAT64
      "https://[fe80::1]/hook", // link-local
      "https://[fd12:3456::1]/hook", // unique-local
      "https://[ff02::1]/hook", // multicast
      "http://localhost:8080/hook",
      "https://LOCALHOST./hook",
      "https://api.localhost/hook",
    ];
    for (const url of refused) {
      const r = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url, events: ["key.created"] });
      expect({ url, status: r.status, error: r.body.error }).toMatchObject({
        url,
        status: 400,
        error: { code: "VALIDATION_ERROR", param: "body.url", message: expect.stringContaining("is not a public address") },
      });
    }
    const mapped = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url: "http://[::ffff:127.0.0.1]/hook", events: ["key.created"] });
    expect(mapped.body.error.message).toContain("127.0.0.1 is not a public address");
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`)).body.data.items).toEqual([]);
  });

  it("accepts a public IP literal and a host name (judged by its DNS answers at delivery)", async () => {
    const { orgId } = await createOrgWithKey(server);
    for (const url of [
      "https://93.184.215.14/hook",
      "https://[2606:4700:4700::1111]/hook",
      "https://hooks.example.com/fs",
      "https://localhost.example.com/fs",
    ]) {
      const r = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url, events: ["plan.changed"] });
      expect({ url, status: r.status }).toEqual({ url, status: 201 });
    }
  });

  it("refuses a change of URL to a private address, and the org's own secret key is refused the same way", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const made = await api(server, "POST", "/v1/orgs/me/webhooks", { key, body: { url: "https://hooks.example.com/fs", events: ["plan.changed"] } });
    expect(made.status).toBe(201);
    const changed = await api(server, "PATCH", `/v1/orgs/${orgId}/webhooks/${made.body.data.id}`, { key, body: { url: "http://10.1.2.3/hook" } });
    expect(changed.status).toBe(400);
    expect(changed.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "body.url" });
    expect((await api(server, "GET", `/v1/orgs/${orgId}/webhooks/${made.body.data.id}`, { key })).body.data.url).toBe("https://hooks.example.com/fs");
    const own = await api(server, "POST", "/v1/orgs/me/webhooks", { key, body: { url: "http://169.254.169.254/latest", events: ["plan.changed"] } });
    expect(own.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "body.url" });
  });

  it("refuses at delivery an endpoint registered while private addresses were allowed: a failed, retried attempt in the log, the receiver never reached", async () => {
    // Registered with FS_WEBHOOK_ALLOW_PRIVATE on; delivered after a restart with it off.
    const app = await startApp({ FS_WEBHOOK_ALLOW_HTTP: "true", FS_WEBHOOK_ALLOW_PRIVATE: "true", FS_WEBHOOK_BACKOFF_MS: "200", FS_WEBHOOK_POLL_MS: "100" });
    try {
      const { orgId } = await createOrgWithKey(app);
      const register = async (url: string): Promise<string> => {
        const r = await admin(app, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url, events: ["key.created"] });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return r.body.data.id;
      };
      // An IP literal (judged before connecting) and a name that resolves to loopback (judged by its DNS answer).
      const literal = await register(receiver.url);
      const named = await register(`http://localhost:${receiver.port}/hook`);
      await app.stop();
      await app.restart({ FS_WEBHOOK_ALLOW_PRIVATE: "false" });
      expect((await admin(app, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" })).status).toBe(201);
      const attempts = async (id: string) =>
        (await admin(app, "GET", `/v1/admin/orgs/${orgId}/webhooks/${id}/deliveries`)).body.data.items as Array<Record<string, any>>;
      for (const id of [literal, named]) {
        // Retried like any failure: a second attempt comes after the 200 ms backoff.
        await expect.poll(async () => (await attempts(id)).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
        for (const a of await attempts(id)) {
          expect(a).toMatchObject({ type: "key.created", status: null, outcome: "retry" });
          expect(a.error).toMatch(/^address (127\.0\.0\.1|::1) is not public/);
        }
      }
      expect(receiver.received).toEqual([]);
    } finally {
      await app.stop();
      app.cleanup();
    }
  });
});
