import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIpDataset } from "../../scripts/data-build.js";
import { smallNpmInputs } from "../helpers/npm-inputs.js";
import { scaled } from "../helpers/time.js";
import { ADMIN_TOKEN, admin, api, startServer, type TestServer } from "./helpers/server.js";

/**
 * Hot switch and rollback on a private copy of the build: a second version is the same build
 * under a later name, a third is an npm-only build (no Tor list, so a Tor exit loses its flag:
 * the answer shows which build served it), a broken one has a corrupt data.mdb.
 */
let server: TestServer;
let root: string;
let first: string;
let npmOnly: string;
const second = "ip-20990101T000000Z-secondcopy";
const TOR_EXIT = "204.8.96.141";

beforeAll(async () => {
  server = await startServer({}, { ownDatasets: true });
  root = join(server.dataDir, "datasets", "ip");
  first = readFileSync(join(root, "current"), "utf8").trim();
  cpSync(join(root, first), join(root, second), { recursive: true });
  // An npm-only build to switch to (its ASN lists cut down: what is asserted is the listed sources' absence).
  const npm = join(server.dataDir, "npm-inputs");
  mkdirSync(npm);
  npmOnly = (await buildIpDataset({ dataDir: server.dataDir, snapshot: false, force: false, ...smallNpmInputs(npm) })).version;
  mkdirSync(join(root, "ip-20990101T000001Z-broken"));
  writeFileSync(join(root, "ip-20990101T000001Z-broken", "data.mdb"), "not an lmdb file");
});
afterAll(async () => {
  await server.stop();
  server.cleanup();
});

/** GET /readyz with the admin token, which shows the builds in service. */
const ready = () => api(server, "GET", "/readyz", { key: ADMIN_TOKEN });
const loaded = async (): Promise<string> => (await ready()).body.data.datasets.ip;

describe("dataset hot switch", () => {
  it("lists the builds on disk and the one in service", async () => {
    const r = await admin(server, "GET", "/v1/admin/datasets");
    expect(r.status).toBe(200);
    expect(r.body.data.ip.loaded).toBe(first);
    const versions = r.body.data.ip.builds.map((b: { version: string }) => b.version);
    expect(versions).toContain(first);
    expect(versions).toContain(second);
  });

  it("activates another build without failing a request in flight, and rolls back", async () => {
    const key = server.demo.secretKey;
    let stop = false;
    const statuses: number[] = [];
    const load = async (): Promise<void> => {
      while (!stop) statuses.push((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status);
    };
    const clients = Array.from({ length: 8 }, load);
    // Calls in flight before, between and after the switches (at least 20 answered each time).
    const answeredPast = (n: number) => expect.poll(() => statuses.length, { timeout: scaled(30_000), interval: 5 }).toBeGreaterThanOrEqual(n);
    await answeredPast(20);
    const fwd = await admin(server, "POST", "/v1/admin/datasets/activate", { version: second });
    expect(fwd.status).toBe(200);
    expect(fwd.body.data).toEqual({ loaded: second, previous: first, changed: true });
    await answeredPast(statuses.length + 20);
    const back = await admin(server, "POST", "/v1/admin/datasets/activate", { version: first });
    expect(back.body.data).toEqual({ loaded: first, previous: second, changed: true });
    await answeredPast(statuses.length + 20);
    stop = true;
    await Promise.all(clients);
    expect(statuses.length).toBeGreaterThan(50);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(readFileSync(join(root, "current"), "utf8").trim()).toBe(first);
    expect(await loaded()).toBe(first);
    await admin(server, "POST", "/v1/admin/datasets/activate", { version: second });
    expect((await ready()).body.data.pool.ip_dataset).toBe(second);
    await admin(server, "POST", "/v1/admin/datasets/activate", { version: first });
  });

  it("answers from the build activated: a Tor exit loses its flag on an npm-only build and gets it back on rollback", async () => {
    const key = server.demo.secretKey;
    const tor = async () => (await api(server, "GET", `/v1/ip/${TOR_EXIT}`, { key })).body;
    expect((await tor()).data.risk.tor).toBe(true);
    expect((await admin(server, "POST", "/v1/admin/datasets/activate", { version: npmOnly })).status).toBe(200);
    const onNpm = await tor();
    expect(onNpm.data.risk.tor).toBe(false);
    expect(onNpm.metadata.source).not.toMatch(/listed sources/);
    expect((await admin(server, "POST", "/v1/admin/datasets/activate", { version: first })).status).toBe(200);
    const back = await tor();
    expect(back.data.risk.tor).toBe(true);
    expect(back.metadata.source).toMatch(/listed sources/);
  });

  it("keeps serving the old build when the new one cannot be opened", async () => {
    const r = await admin(server, "POST", "/v1/admin/datasets/activate", { version: "ip-20990101T000001Z-broken" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("DATASET_SWITCH_FAILED");
    expect(await loaded()).toBe(first);
    expect(readFileSync(join(root, "current"), "utf8").trim()).toBe(first);
    expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: server.demo.secretKey })).status).toBe(200);
    const unknown = await admin(server, "POST", "/v1/admin/datasets/activate", { version: "ip-20000101T000000Z-none" });
    expect(unknown.status).toBe(404);
  });

  it("reloads what `current` names, by admin call or SIGHUP", async () => {
    writeFileSync(join(root, "current"), `${second}\n`);
    const r = await admin(server, "POST", "/v1/admin/datasets/reload");
    expect(r.body.data).toMatchObject({ loaded: second, changed: true });
    writeFileSync(join(root, "current"), `${first}\n`);
    server.signal("SIGHUP");
    await expect.poll(loaded, { timeout: scaled(10_000), interval: 20 }).toBe(first);
    // The pool threads follow the switch too.
    expect((await ready()).body.data.pool.ip_dataset).toBe(first);
  });
});
