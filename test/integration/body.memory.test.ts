import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBeaconProject, startServer, type TestServer } from "./helpers/server.js";

/**
 * What clients without a secret key can make the process hold: 500 connections each declaring a
 * 1 MB beacon body and sending half of it, then waiting. Only what FS_BODY_BUFFER_PUBLIC_BYTES
 * allows is held; the others are answered 503 at once, and the process's memory stays within
 * that cap (plus per-connection overhead), far below the 250 MB they sent.
 */
const MB = 1024 * 1024;
const CAP = 4 * MB;
const CLIENTS = 500;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FS_MAX_BODY_BYTES: String(MB), FS_BODY_BUFFER_PUBLIC_BYTES: String(CAP) });
});
afterAll(async () => {
  await server.stop();
  server.cleanup();
});

/** Resident memory of the server process, in bytes (Linux /proc). */
function rss(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid()}/status`, "utf8"));
  return Number(m![1]) * 1024;
}

describe("request bodies held across connections", () => {
  it("500 slow 1 MB uploads: at most the cap is held, the rest refused at once, memory bounded", async () => {
    const p = await createBeaconProject(server);
    const gc = () => new Promise((r) => setTimeout(r, 500));
    await gc();
    const before = rss();
    const sockets: Socket[] = [];
    const statuses: number[] = [];
    const half = Buffer.alloc(MB / 2, 0x20);
    await Promise.all(
      Array.from({ length: CLIENTS }, () => new Promise<void>((resolve) => {
        const s = connect(server.port, "127.0.0.1", () => {
          s.write(
            `POST /v1/collect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.publishableKey}\r\nContent-Type: application/json\r\nContent-Length: ${MB}\r\nOrigin: https://shop.example.com\r\n\r\n`,
          );
          s.write(half, () => resolve());
        });
        s.on("data", (d) => {
          const m = /^HTTP\/1\.1 (\d{3})/.exec(d.toString("latin1"));
          if (m) statuses.push(Number(m[1]));
        });
        s.on("error", () => resolve());
        sockets.push(s);
      })),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const during = rss();
    const refused = statuses.filter((s) => s === 503).length;
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 1000));
    // Only whole 1 MB leases fit in the cap: every other upload was refused without being held.
    expect(refused).toBeGreaterThanOrEqual(CLIENTS - CAP / MB);
    expect(during - before, `RSS grew from ${before} to ${during}`).toBeLessThan(CAP + 64 * MB);
    // The service still answers, and the held leases were given back when the clients left.
    const after = await fetch(`${server.url}/healthz`);
    expect(after.status).toBe(200);
    const again = await fetch(`${server.url}/v1/collect`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.publishableKey}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "pageview", page: "/" }),
    });
    expect(again.status).toBe(200);
  }, 60_000);
});
