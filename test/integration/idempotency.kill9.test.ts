import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CHECK, orgsNamed, post, used } from "../helpers/idempotency.js";
import { ADMIN_TOKEN, createOrgWithKey, useServer, type TestServer } from "./helpers/server.js";

let server!: TestServer;
useServer((s) => (server = s));

describe("Idempotency-Key", () => {
  it("survives kill -9: after a restart the retry gets the stored answer and no second charge", async () => {
    const org = await createOrgWithKey(server);
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const firsts = await Promise.all(keys.map((k) => post(server, "/v1/check", org.key, CHECK, k)));
    for (const r of firsts) expect(r.status).toBe(200);
    const orgKey = randomUUID();
    const created = await post(server, "/v1/admin/orgs", ADMIN_TOKEN, { name: `after kill ${orgKey}` }, orgKey);
    expect(created.status).toBe(201);
    await server.kill9(); // right after the answers: the writer has likely not applied them yet
    await server.restart();
    const retries = await Promise.all(keys.map((k) => post(server, "/v1/check", org.key, CHECK, k)));
    retries.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.headers.get("idempotent-replayed")).toBe("true");
      expect(r.text).toBe(firsts[i]!.text);
    });
    const again = await post(server, "/v1/admin/orgs", ADMIN_TOKEN, { name: `after kill ${orgKey}` }, orgKey);
    expect(again.text).toBe(created.text);
    expect(await orgsNamed(server, `after kill ${orgKey}`)).toBe(1);
    expect(await used(server, org.orgId, org.key)).toBe(40);
  });
});
