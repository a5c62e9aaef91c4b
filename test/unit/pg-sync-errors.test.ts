import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { PgError, SyncPg } from "../../src/store/pg/sync-client.js";

/** A local port with nothing listening on it (taken, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("SyncPg errors", () => {
  const clients: SyncPg[] = [];
  afterAll(() => clients.forEach((c) => c.close()));

  it("a server that refuses the connection is unavailable (503 NOT_READY), not an internal error", async () => {
    // A refused connection fails at once whatever the timeout; a long one keeps a loaded machine's
    // slow start of the connection thread from reading as TIMEOUT.
    const pg = new SyncPg(`postgres://fs:fs@127.0.0.1:${await closedPort()}/fs`, 60_000, "test");
    clients.push(pg);
    for (let i = 0; i < 2; i++) {
      // Twice: the first connection attempt, then the replacement of the broken one.
      let caught: unknown;
      try {
        pg.query("SELECT 1");
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(PgError);
      expect((caught as PgError).code).toBe("CONNECTION");
      expect((caught as PgError).unavailable).toBe(true);
      expect((caught as PgError).message).toMatch(/ECONNREFUSED/);
    }
  });
});
