import { afterEach, describe, expect, it } from "vitest";
import { scaled } from "../helpers/time.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { admin, api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/** Servers and receivers of the running test, stopped whatever happens. */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function serverWith(env: Record<string, string>): Promise<TestServer> {
  // The receivers listen on 127.0.0.1: private addresses allowed.
  const server = await startServer({ FS_WEBHOOK_ALLOW_HTTP: "true", FS_WEBHOOK_ALLOW_PRIVATE: "true", FS_WEBHOOK_POLL_MS: "100", ...env });
  cleanups.push(async () => {
    await server.stop();
    server.cleanup();
  });
  return server;
}

async function receiverOn(): Promise<WebhookReceiver> {
  const receiver = new WebhookReceiver();
  await receiver.start();
  cleanups.push(() => receiver.stop());
  return receiver;
}

describe("webhook delivery across a kill -9", () => {
  it("an event committed while the receiver fails is delivered once after kill -9 and restart, with its original webhook-id", async () => {
    const server = await serverWith({ FS_WEBHOOK_BACKOFF_MS: "300", FS_WEBHOOK_TIMEOUT_MS: "2000" });
    const receiver = await receiverOn();
    // The receiver is down (answers 503) when the event is committed.
    receiver.answer = () => 503;
    const { orgId } = await createOrgWithKey(server);
    const made = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url: receiver.url, events: ["key.created", "key.disabled"] });
    expect(made.status).toBe(201);
    receiver.secret = made.body.data.secret;
    const key = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    expect(key.status).toBe(201);
    await expect.poll(() => receiver.received.length, { timeout: scaled(15_000) }).toBeGreaterThanOrEqual(2);
    const msgId = receiver.received[0]!.id;
    expect(receiver.received[0]!.verified?.type).toBe("key.created");

    await server.kill9();
    receiver.answer = () => 200;
    await server.restart();

    await expect.poll(() => receiver.delivered(msgId).length, { timeout: scaled(20_000) }).toBe(1);
    // A later event goes out after it (in order per endpoint), and the first is never sent again.
    await admin(server, "POST", `/v1/admin/keys/${key.body.data.id}/disable`);
    await expect
      .poll(() => receiver.received.filter((r) => r.verified?.type === "key.disabled" && r.status === 200).length, { timeout: scaled(20_000) })
      .toBe(1);
    expect(receiver.delivered(msgId)).toHaveLength(1);
    const last = receiver.received.findLastIndex((r) => r.id === msgId);
    expect(receiver.received[last]!.status).toBe(200);
    expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
  });
});

describe("a slow receiver", () => {
  it("never slows the API: with every delivery slot held by a receiver that never answers, calls and writes keep answering", async () => {
    const server = await serverWith({ FS_WEBHOOK_TIMEOUT_MS: "60000", FS_WEBHOOK_CONCURRENCY: "2" });
    const receiver = await receiverOn();
    receiver.answer = () => "hang";
    const { orgId, key } = await createOrgWithKey(server);
    for (let i = 0; i < 2; i++) {
      const r = await admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url: `${receiver.url}/${i}`, events: ["key.created"] });
      expect(r.status).toBe(201);
    }
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    // Both slots are taken by requests that will not be answered for a minute.
    await expect.poll(() => receiver.received.length, { timeout: scaled(15_000) }).toBe(2);
    for (let i = 0; i < 10; i++) {
      const started = Date.now();
      const write = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
      const read = await api(server, "GET", "/v1/ip/8.8.8.8", { key });
      expect(write.status).toBe(201);
      expect(read.status).toBe(200);
      // Generous: answered, not held until a webhook's timeout (60 s).
      expect(Date.now() - started).toBeLessThan(scaled(10_000));
    }
    const listed = await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`);
    expect(listed.body.data.items.map((e: { pending: number }) => e.pending)).toEqual([11, 11]);
  });
});
