import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { api, createBeaconProject, useServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, item 5: behind a proxy that appends its own X-Forwarded-For line (HAProxy's
 * `option forwardfor`), the client's own first line must not win. Every X-Forwarded-For line is
 * read, joined in order, and the rightmost address that is not a trusted proxy is the client.
 * Requests are written by hand: fetch would merge the lines into one.
 */

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/** In Google's published Googlebot ranges: what a client forges on its own first line. */
const GOOGLEBOT_IP = "66.249.66.1";
/** The address the proxy saw (a residential broadband address), on the line it appends. */
const REAL_IP = "73.15.20.30";

let server!: TestServer;
// Loopback (the test's own connections) is the trusted proxy.
useServer((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

/** One request on a connection of its own, written byte for byte; `headers` may repeat a name. */
function raw(method: string, path: string, headers: [string, string][], body = ""): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, "Connection: close", ...headers.map(([k, v]) => `${k}: ${v}`)];
    if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    let text = "";
    socket.setEncoding("latin1");
    socket.setTimeout(20_000, () => socket.destroy());
    socket.on("data", (d: string) => (text += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const end = text.indexOf("\r\n\r\n");
      resolve({ status: Number(m[1]), headers: text.slice(0, end), body: text.slice(end + 4) });
    });
    // Not end(): uWS takes a half-closed connection as gone and would not answer; it closes after
    // answering (Connection: close).
    socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
  });
}

type Project = Awaited<ReturnType<typeof createBeaconProject>>;

/** A Googlebot hit through the proxy with these X-Forwarded-For lines; returns its observation. */
async function googlebotHit(p: Project, forwardedFor: string[]) {
  const r = await raw(
    "POST",
    "/v1/collect",
    [["Authorization", `Bearer ${p.publishableKey}`], ["Content-Type", "application/json"], ["User-Agent", GOOGLEBOT], ...forwardedFor.map((v): [string, string] => ["X-Forwarded-For", v])],
    JSON.stringify({ action: "pageview", page: "/" }),
  );
  expect(r.status, r.body).toBe(200);
  const id = JSON.parse(r.body.slice(r.body.indexOf("{"))).data.observation_id as string;
  const list = await api(server, "GET", `/v1/projects/${p.projectId}/observations?limit=1`, { key: p.secretKey });
  expect(list.body.data.items[0].id).toBe(id);
  return list.body.data.items[0];
}

describe("X-Forwarded-For from a trusted proxy", () => {
  it("a forged first line (Googlebot's address) loses to the line the proxy appended (HAProxy option forwardfor)", async () => {
    const p = await createBeaconProject(server);
    const o = await googlebotHit(p, [GOOGLEBOT_IP, REAL_IP]);
    expect(o.ip).toBe(REAL_IP);
    expect(o.bot_verified).toBe(false);
    expect(o.reasons).toContain("bot:spoofed:googlebot");
    expect(o.decision).not.toBe("allow");
  });

  it("reads lines and entries alike: one joined line (nginx, AWS ALB), a chain of proxies over several lines, empty lines", async () => {
    const p = await createBeaconProject(server);
    // nginx's $proxy_add_x_forwarded_for and an ALB append to the client's line.
    expect((await googlebotHit(p, [`${GOOGLEBOT_IP}, ${REAL_IP}`])).ip).toBe(REAL_IP);
    // Two trusted hops: the edge appended the client, the inner proxy (loopback, trusted) itself.
    expect((await googlebotHit(p, [`${GOOGLEBOT_IP}, 10.9.8.7`, `${REAL_IP}, 127.0.0.1`])).ip).toBe(REAL_IP);
    // An empty line sent by the client is no entry.
    expect((await googlebotHit(p, ["", REAL_IP])).ip).toBe(REAL_IP);
    // A genuine Googlebot behind the proxy is still verified.
    const real = await googlebotHit(p, [GOOGLEBOT_IP]);
    expect(real.ip).toBe(GOOGLEBOT_IP);
    expect(real.bot_verified).toBe(true);
  });
});

describe("dashboard sign-in behind a trusted proxy", () => {
  const signIn = (key: string, forwardedFor: string[]) =>
    raw(
      "POST",
      "/dashboard/login",
      [["Content-Type", "application/x-www-form-urlencoded"], ["Origin", server.url], ...forwardedFor.map((v): [string, string] => ["X-Forwarded-For", v])],
      new URLSearchParams({ key }).toString(),
    );

  it("counts wrong keys against the address the proxy appended, whatever the client's own line says", async () => {
    const real = "198.51.100.77";
    // A new forged first line each time: the wrong keys still count for the real address.
    for (let i = 0; i < 10; i++) expect((await signIn("nope", [`203.0.113.${i + 1}`, real])).status).toBe(401);
    const limited = await signIn("nope", ["203.0.113.200", real]);
    expect(limited.status).toBe(429);
    expect(limited.headers).toMatch(/\r\nretry-after: [1-9]\d*\r\n/i);
    // The forged addresses were not charged: a client really there gets 401, not 429.
    expect((await signIn("nope", ["203.0.113.1"])).status).toBe(401);
    expect((await signIn("nope", ["192.0.2.1", "203.0.113.1"])).status).toBe(401);
  });
});
