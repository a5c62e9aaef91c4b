import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timedRequest } from "./helpers/raw-http.js";
import { createBeaconProject, startServer, type TestServer } from "./helpers/server.js";
import { scaled } from "../helpers/time.js";

/**
 * What clients without a secret key can make the process hold: 500 connections from one address
 * each declaring a 1 MB beacon body and sending half of it, then waiting. Bytes are counted as
 * they arrive and one address holds at most FS_BODY_BUFFER_PER_CLIENT_BYTES of the public pool:
 * the other uploads are answered 503 as their bytes arrive, those held are cut with 408 at the
 * deadline, and the process's memory stays within the cap (plus per-connection overhead), far
 * below the 250 MB they sent. A client at another address is served meanwhile.
 */
const MB = 1024 * 1024;
const CAP = 4 * MB;
const CLIENTS = 500;
const TIMEOUT_MS = 3000;
let server: TestServer;

beforeAll(async () => {
  // Half a megabyte in 3 s is below 1 MiB/s: the uploads held are cut at the deadline.
  server = await startServer({
    FS_MAX_BODY_BYTES: String(MB),
    FS_BODY_BUFFER_PUBLIC_BYTES: String(CAP),
    FS_BODY_TIMEOUT_MS: String(TIMEOUT_MS),
    FS_BODY_MIN_BYTES_PER_SECOND: String(MB),
  });
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

/** Resident memory once it has settled (two readings 100 ms apart within 2 MB): the server is done starting. */
async function settledRss(): Promise<number> {
  let last = rss();
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = rss();
    if (Math.abs(now - last) < 2 * MB) return now;
    last = now;
  }
}

describe("request bodies held across connections", () => {
  it("500 slow 1 MB uploads from one address: at most its share is held, the rest refused, memory bounded, others served", async () => {
    const p = await createBeaconProject(server);
    const before = await settledRss();
    const sockets: Socket[] = [];
    const statuses: number[] = [];
    const half = Buffer.alloc(MB / 2, 0x20);
    const collect = (localAddress: string) =>
      timedRequest(`${server.url}/v1/collect`, {
        method: "POST",
        localAddress,
        headers: { authorization: `Bearer ${p.publishableKey}`, "content-type": "application/json" },
        body: JSON.stringify({ action: "pageview", page: "/" }),
      });
    try {
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
      // Another address is not refused for this one's uploads.
      expect((await collect("127.0.0.2")).status).toBe(200);
      const during = rss();
      expect(during - before, `RSS grew from ${before} to ${during}`).toBeLessThan(CAP + 64 * MB);
      // Every upload is answered: refused at once (503), or cut at the deadline (408).
      await expect.poll(() => statuses.length, { timeout: TIMEOUT_MS + 15_000, interval: 200 }).toBe(CLIENTS);
      expect(statuses.filter((s) => s !== 503 && s !== 408)).toEqual([]);
      expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(CLIENTS / 2);
    } finally {
      for (const s of sockets) s.destroy();
    }
    // The service still answers, and what was held was given back.
    const after = await fetch(`${server.url}/healthz`);
    expect(after.status).toBe(200);
    expect((await collect("127.0.0.1")).status).toBe(200);
  }, scaled(60_000));
});
