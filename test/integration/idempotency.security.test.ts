import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { orgsNamed } from "../helpers/idempotency.js";
import { ADMIN_TOKEN, api, createOrgWithKey, useServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, findings 4 and 9. An admin POST's effect and the stored answer of its Idempotency-Key
 * used to be written apart (the effect by the writer, the answer one journal line later), so a
 * crash between them let the retry create a second org. And non-ASCII bytes in a key were
 * dropped without a word.
 *
 * The ledger is forwarded only every second here, so the journal's last lines are still unapplied
 * when the process is killed right after its answer.
 */

let server!: TestServer;
useServer((s) => (server = s), { FS_LEDGER_FLUSH_MS: "1000" });

async function post(path: string, body: unknown, idem: string) {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", "idempotency-key": idem },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), text: await res.text() };
}


/**
 * kill -9 as the charge journal's last write was being made: its last line is cut in half (the
 * next start drops a torn line: nobody was answered for it), then the service starts again.
 */
async function crashTearingLastJournalLine(): Promise<void> {
  await server.kill9();
  const dir = join(server.dataDir, "state", "journal");
  const newest = readdirSync(dir).filter((n) => n.startsWith("charges-")).sort().at(-1);
  if (newest) {
    const path = join(dir, newest);
    const text = readFileSync(path, "utf8");
    if (text.endsWith("\n")) {
      const start = text.lastIndexOf("\n", text.length - 2) + 1;
      writeFileSync(path, text.slice(0, start + Math.floor((text.length - 1 - start) / 2)));
    }
  }
  await server.restart();
}

describe("admin POSTs store their Idempotency-Key answer in the commit of their effect", () => {
  it("a create whose process died right after it committed: the retry gets its answer, there is one org", async () => {
    const k = randomUUID();
    const body = { name: `atomic ${k}` };
    const first = await post("/v1/admin/orgs", body, k);
    expect(first.status).toBe(201);
    await crashTearingLastJournalLine();
    const retry = await post("/v1/admin/orgs", body, k);
    expect(retry.status).toBe(201);
    expect(retry.replayed).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(await orgsNamed(server, body.name)).toBe(1);
  });

  it("a usage adjustment and its answer are one journal line: after the crash the retry adjusts once", async () => {
    const org = await createOrgWithKey(server);
    const k = randomUUID();
    const path = `/v1/admin/orgs/${org.orgId}/usage/adjust`;
    const first = await post(path, { credits: 7, reason: "atomic" }, k);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text).data.used).toBe(7);
    await crashTearingLastJournalLine();
    const retry = await post(path, { credits: 7, reason: "atomic" }, k);
    expect(retry.status).toBe(200);
    // Replayed if the line was applied before the kill, run again if it was lost with its answer: counted once either way.
    expect(JSON.parse(retry.text).data.used).toBe(7);
    expect((await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.used).toBe(7);
  });
});

describe("non-ASCII Idempotency-Key bytes", () => {
  /** The header's value as UTF-8 bytes on the wire (fetch sends a header string's chars as bytes). */
  const bytes = (text: string): string => Buffer.from(text, "utf8").toString("latin1");

  it("a key of nothing but non-ASCII bytes or blanks is refused on admin routes: 400, nothing created", async () => {
    for (const key of ["ключ", "日本", ""]) {
      const name = `blank key ${randomUUID()}`;
      const r = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, body: { name }, headers: { "idempotency-key": bytes(key) } });
      expect([key, r.status, r.body.error?.code]).toEqual([key, 400, "VALIDATION_ERROR"]);
      expect(r.body.error.message).toMatch(/^header\.idempotency-key/);
      expect(await orgsNamed(server, name)).toBe(0);
    }
  });

  it("a key of nothing but non-ASCII bytes or blanks is refused on metered routes too: 400, nothing charged", async () => {
    const org = await createOrgWithKey(server);
    for (const key of ["ключ", "日本", ""]) {
      const r = await api(server, "POST", "/v1/email", { key: org.key, body: { email: "someone@example.com" }, headers: { "idempotency-key": bytes(key) } });
      expect([key, r.status, r.body.error?.code]).toEqual([key, 400, "VALIDATION_ERROR"]);
      expect(r.body.metadata.credits).toBe(0);
    }
    expect((await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.used).toBe(0);
  });

  it("non-ASCII inside a key is refused on every route that takes one", async () => {
    const org = await createOrgWithKey(server);
    const check = await api(server, "POST", "/v1/check", { key: org.key, body: { form_id: "f", metadata: { ip: "8.8.8.8" } }, headers: { "idempotency-key": bytes("a-ключ-3") } });
    expect([check.status, check.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(check.body.metadata.credits).toBe(0);
    const created = await api(server, "POST", "/v1/admin/orgs", { key: ADMIN_TOKEN, body: { name: "x" }, headers: { "idempotency-key": bytes("a-日本-3") } });
    expect([created.status, created.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
  });
});
