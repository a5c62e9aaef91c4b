import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 25, item 8: the dashboard's sign-in limit counts wrong keys per client address and per
 * key id, and answers further wrong keys 429, but never refuses a right key: one client cannot
 * lock out everyone behind its address (a NAT), nor the owner of the key it guesses at.
 */

let server!: TestApp;
// Loopback is a trusted proxy, so each test speaks from X-Forwarded-For addresses of its own.
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

/** The limit's default (FS_DASHBOARD_SIGNIN_FAILURES). */
const LIMIT = 10;
let nextAddress = 1;
const newAddress = (): string => `198.51.100.${nextAddress++}`;

async function signIn(key: string, address: string): Promise<{ status: number; retryAfter: number; text: string; cookie: string }> {
  const res = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url, "x-forwarded-for": address },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  return { status: res.status, retryAfter: Number(res.headers.get("retry-after") ?? 0), text: await res.text(), cookie: (res.headers.get("set-cookie") ?? "").split(";")[0]! };
}

/** Status of the overview page with this session cookie (200 signed in). */
async function overview(cookie: string): Promise<number> {
  return (await server.fetch(`${server.url}/dashboard`, { headers: { cookie }, redirect: "manual" })).status;
}

/** A key of the right shape for `key`'s key id, with another secret part. */
const guessAt = (key: string, i: number): string => key.slice(0, "fs_live_".length + 12) + String(i).padStart(32, "x");

describe("dashboard sign-in limit", () => {
  it("past the limit wrong keys get 429 with Retry-After, and the right key from the same address still signs in", async () => {
    const { key } = await createOrgWithKey(server, "pro");
    const nat = newAddress();
    for (let i = 0; i < LIMIT; i++) expect((await signIn("nope", nat)).status).toBe(401);
    const refused = await signIn("nope", nat);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(0);

    // Someone else behind the same address, with the right key: signed in.
    const ok = await signIn(key, nat);
    expect(ok.status, ok.text).toBe(303);
    expect(await overview(ok.cookie)).toBe(200);
    expect(refused.text).toMatch(/The right key signs in at any time/);
    // The success cleared nothing: wrong keys from the address are still refused, the wait restarted.
    const again = await signIn(`fs_live_${"y".repeat(44)}`, nat);
    expect(again.status).toBe(429);
    expect(again.retryAfter).toBeGreaterThanOrEqual(refused.retryAfter);
    expect((await signIn(key, nat)).status).toBe(303);
  });

  it("counts guesses at one key id from many addresses; the key's owner still signs in", async () => {
    const target = await createOrgWithKey(server, "pro");
    const other = await createOrgWithKey(server, "pro");
    for (let i = 0; i < LIMIT; i++) expect((await signIn(guessAt(target.key, i), newAddress())).status).toBe(401);
    // An address never seen before, guessing at the same key id: 429.
    const fresh = newAddress();
    const refused = await signIn(guessAt(target.key, 99), fresh);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(0);
    // The same address guessing at another key id is answered as usual, and both owners sign in.
    expect((await signIn(guessAt(other.key, 0), newAddress())).status).toBe(401);
    expect((await signIn(target.key, fresh)).status).toBe(303);
    expect((await signIn(other.key, fresh)).status).toBe(303);
  });
});
