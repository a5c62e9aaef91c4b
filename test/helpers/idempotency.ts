import { expect } from "vitest";
import { admin, api, type Reachable } from "../integration/helpers/server.js";

/** Shared by the Idempotency-Key tests (test/app/idempotency.test.ts, test/integration/idempotency.kill9.test.ts). */
export const CHECK = { form_id: "signup", metadata: { ip: "8.8.8.8", email: "someone@example.com" } };

/** Credits the org has used this period. */
export async function used(server: Reachable, orgId: string, key: string): Promise<number> {
  const r = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
  expect(r.status).toBe(200);
  return r.body.data.used;
}

/** How many orgs have this name (every page of the admin listing). */
export async function orgsNamed(server: Reachable, name: string): Promise<number> {
  let n = 0;
  let cursor: string | null = "";
  while (cursor !== null) {
    const page: { body: { data: { items: Array<{ name: string }>; next_cursor: string | null } } } = await admin(
      server,
      "GET",
      `/v1/admin/orgs?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    n += page.body.data.items.filter((o) => o.name === name).length;
    cursor = page.body.data.next_cursor;
  }
  return n;
}

/** A POST with the raw answer text (a replay must be byte for byte the first answer). */
export async function post(server: Reachable, path: string, key: string, body: unknown, idem?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, "content-type": "application/json", ...extra };
  if (idem !== undefined) headers["idempotency-key"] = idem;
  const res = await (server.fetch ?? fetch)(server.url + path, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
