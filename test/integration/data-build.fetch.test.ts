import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildIpDataset, usableListedSources } from "../../scripts/data-build.js";
import { acquireSources } from "../../scripts/sources/acquire.js";
import { isNpmSource, loadManifest, type FileSource } from "../../scripts/sources/manifest.js";
import { extractSnapshot, loadSnapshot } from "../../scripts/sources/snapshot.js";
import { coverageOf } from "../../src/datasets/coverage.js";
import { openIpDataset, type IpSourceMeta } from "../../src/datasets/ip-dataset.js";
import { parseIp } from "../../src/shared/ip.js";
import { smallNpmInputs } from "../helpers/npm-inputs.js";
import { scaled } from "../helpers/time.js";

// `--fetch --fetch-mirror URL` against a local HTTP server that serves the repository's snapshot,
// extracted, the way an operator's internal mirror would. One file is gone (404), one answers 500,
// one answers an HTML page with 200: missing, failed and drifted are reported and the build still
// succeeds; with the snapshot as fallback, each of them comes from the snapshot instead. Sources
// the snapshot withholds for their licence are not on this mirror either (404). What is asserted is
// about the listed sources, so every build reads the npm packages' ASN lists cut down.

const snapshot = loadSnapshot();
const SRC = mkdtempSync(join(tmpdir(), "fetch-mirror-src-"));
extractSnapshot(snapshot, SRC);
const NPM = mkdtempSync(join(tmpdir(), "fetch-npm-"));
const npm = smallNpmInputs(NPM);
const allSources = loadManifest().sources.filter((s): s is FileSource => !isNpmSource(s));
const fileSources = allSources.filter((s) => snapshot.files.has(s.path));
const GONE = "cloud/jonhadfield-cloud-ips/gcp.json";
const BROKEN = "tor/alireza-rezaee-tor-nodes/latest.exits.csv";
const HTML = "proxy/monosans-proxy-list/proxies/socks4.txt";

let server: Server;
let mirror: string;
let dataDir: string;
const requested: string[] = [];
let sources: IpSourceMeta[];
const lines: string[] = [];

describe("data-build --fetch --fetch-mirror", () => {
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).slice(1);
      requested.push(path);
      const file = normalize(join(SRC, path));
      if (path === BROKEN) return void res.writeHead(500).end("upstream error");
      if (path === HTML) return void res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Too many requests</body></html>\n");
      if (path === GONE || !file.startsWith(SRC) || !existsSync(file)) return void res.writeHead(404).end("not found");
      res.writeHead(200).end(readFileSync(file));
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    dataDir = mkdtempSync(join(tmpdir(), "fetch-build-"));
    ({ sources } = await buildIpDataset({ ...npm, dataDir, fetch: true, fetchMirror: mirror, fetchTimeoutMs: 10_000, snapshot: false, log: (l) => lines.push(l) }));
  }, scaled(120_000));

  afterAll(async () => {
    await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    rmSync(SRC, { recursive: true, force: true });
    rmSync(NPM, { recursive: true, force: true });
  });

  const statusOf = (path: string) => sources.find((s) => s.id === fileSources.find((f) => f.path === path)!.id)!;

  it("downloads every listed source from the mirror at its snapshot path", () => {
    for (const s of allSources) expect(requested, s.path).toContain(s.path);
  });

  it("uses what it downloaded: same bytes as the snapshot, parsed as usual", () => {
    const aws = sources.find((s) => s.id === "aws")!;
    const want = createHash("sha256").update(readFileSync(join(SRC, "cloud/jonhadfield-cloud-ips/aws.json"))).digest("hex");
    expect(want).toBe(snapshot.files.get("cloud/jonhadfield-cloud-ips/aws.json")!.sha256);
    expect(aws).toMatchObject({ status: "ok", sha256: want, rows: 16817, data_date: "2026-08-21T07:37:05.000Z", taken: expect.stringMatching(/^\d{4}-/) });
    const ok = sources.filter((s) => s.status === "ok" && s.kind !== "asn" && s.kind !== "country" && s.kind !== "mobile-asn");
    expect(ok.length).toBe(fileSources.length - 3);
  });

  it("reports a withheld file as missing, a server error and an HTML page as failed, and carries on", () => {
    expect(statusOf(GONE)).toMatchObject({ status: "missing", reason: "HTTP 404", rows: 0 });
    expect(statusOf(BROKEN)).toMatchObject({ status: "failed", reason: "HTTP 500" });
    expect(statusOf(HTML)).toMatchObject({ status: "failed", reason: expect.stringMatching(/rows do not parse as host-port-list.*drifted/) });
    expect(lines.some((l) => /missing +gcp: HTTP 404/.test(l))).toBe(true);
    const ds = openIpDataset(dataDir);
    try {
      const f = ds.lookup(parseIp("3.5.140.1")!);
      expect([f.cloud_provider, f.cloud_region]).toEqual(["aws", "ap-northeast-2"]);
      // GCP was not fetched: its region is gone, though other lists still know the range as Google's.
      expect(ds.lookup(parseIp("34.35.0.1")!).cloud_region).toBeNull();
      expect(ds.meta.source).toMatch(new RegExp(` \\+ ${fileSources.length - 3}/${allSources.length} listed sources$`));
      const manifest = JSON.parse(readFileSync(join(ds.dir, "manifest.json"), "utf8"));
      const gcp = manifest.sources.find((s: { id: string }) => s.id === "gcp");
      expect(gcp).toMatchObject({ status: "missing", reason: "HTTP 404", origin: `${mirror}${GONE}` });
    } finally {
      ds.close();
    }
  });

  it("says in the build's provenance which sources came from local copies after a failed or drifted download", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fetch-fallback-"));
    try {
      const { version } = await buildIpDataset({ ...npm, dataDir: dir, fetch: true, fetchMirror: mirror, sourcesDir: SRC, snapshot: false });
      const ds = openIpDataset(dir);
      try {
        expect(ds.meta.version).toBe(version);
        // Exactly the gone (404), broken (500) and drifted (HTML) files came from local copies; the notes say why.
        const fellBack = ds.meta.sources.filter((x) => x.note).map((x) => `${x.id}: ${x.note}`);
        const html = fileSources.find((f) => f.path === HTML)!.id;
        expect(fellBack.map((n) => n.split(":")[0]).sort(), fellBack.join("\n")).toEqual(["gcp", html, "tor-exits"].sort());
        expect(ds.meta.source).toMatch(/\(3 from a fallback after a failed download or a missing file\)$/);
        expect(ds.meta.sources.find((x) => x.id === html)?.note).toMatch(/^download failed \(.*drifted.*\); used /);
        const gcp = ds.meta.sources.find((x) => x.id === "gcp");
        expect(gcp?.note).toMatch(/^download failed \(HTTP 404\); used /);
        expect(ds.meta.sources.find((x) => x.id === "aws")?.note).toBeNull();
      } finally {
        ds.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));

  it("falls back to the local copy for a download that fails when --sources is also given", async () => {
    const picked = fileSources.filter((s) => [GONE, BROKEN, "cloud/jonhadfield-cloud-ips/aws.json"].includes(s.path));
    const got = await acquireSources(picked, { fetch: true, fetchMirror: mirror, sourcesDir: SRC });
    for (const [i, s] of picked.entries()) {
      const g = got[i]!;
      expect(g.status, s.id).toBe("ok");
      if (g.status !== "ok") continue;
      if (s.path === GONE || s.path === BROKEN) {
        expect(g.note).toMatch(new RegExp(`^download failed \\(HTTP (404|500)\\); used ${join(SRC, s.path)}$`));
      } else {
        expect([g.note, g.origin]).toEqual([null, `${mirror}${s.path}`]);
      }
    }
  });

  it("fails with a summary and changes nothing when no download succeeds, with or without the snapshot to fall back on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fetch-down-"));
    try {
      cpSync(join(inject("datasetDataDir"), "datasets"), join(dir, "datasets"), { recursive: true });
      const root = join(dir, "datasets", "ip");
      const before = { current: readFileSync(join(root, "current"), "utf8"), builds: readdirSync(root).sort() };
      // A port nothing listens on: every download fails fast with a connection error.
      const closed = createServer();
      await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((ok) => closed.close(() => ok()));
      const unreachable = `http://127.0.0.1:${port}`;
      for (const snapshot of [false, undefined] as const) {
        const lines: string[] = [];
        await expect(buildIpDataset({ ...npm, dataDir: dir, fetch: true, fetchMirror: unreachable, fetchTimeoutMs: 5_000, snapshot, force: true, log: (l) => lines.push(l) })).rejects.toThrow(
          /^--fetch: none of the \d+ sources could be downloaded .*; nothing was built and the current build stays$/,
        );
        // Each source's failure was reported, then the count.
        expect(lines.some((l) => /fetch failed: ECONNREFUSED/.test(l))).toBe(true);
        expect(lines.find((l) => l.startsWith("downloads: "))).toMatch(/^downloads: 0 of \d+ sources fetched from upstream/);
        expect({ current: readFileSync(join(root, "current"), "utf8"), builds: readdirSync(root).sort() }).toEqual(before);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));

  it("reuses an existing build made from identical inputs instead of writing another", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fetch-same-"));
    try {
      const first = await buildIpDataset({ ...npm, dataDir: dir, sourcesDir: SRC, snapshot: false });
      const root = join(dir, "datasets", "ip");
      const builds = readdirSync(root).sort();
      const lines: string[] = [];
      const again = await buildIpDataset({ ...npm, dataDir: dir, sourcesDir: SRC, snapshot: false, log: (l) => lines.push(l) });
      expect(again.version).toBe(first.version);
      expect(again.madeCurrent).toBe(true);
      expect(again.summary).toMatch(new RegExp(`^reused ${first.version} in `));
      expect(lines).toContain(`inputs identical to ${first.version}: reused it, nothing written`);
      expect(readdirSync(root).sort()).toEqual(builds);
      // One count, named: the summary's listed sources are metadata.source's, and with the bot
      // registries they make the manifest's usable count; coverage adds the npm ASN and country files.
      const ds = openIpDataset(dir);
      try {
        const listed = / \+ (\d+\/\d+) listed sources/.exec(ds.meta.source)![1]!;
        const summed = /with (\d+)\/(\d+) listed sources \+ (\d+)\/(\d+) bot registries usable;/.exec(again.summary)!;
        expect(`${summed[1]}/${summed[2]}`).toBe(listed);
        expect(Number(summed[1]) + Number(summed[3])).toBe(usableListedSources(join(root, first.version)));
        const npmOk = ds.meta.sources.filter((s) => (s.kind === "asn" || s.kind === "country") && s.status === "ok").length;
        expect(coverageOf(ds.meta).usable).toBe(Number(summed[1]) + Number(summed[3]) + npmOk);
      } finally {
        ds.close();
      }
      // Other inputs (npm only) make a build of their own.
      const other = await buildIpDataset({ ...npm, dataDir: dir, snapshot: false, force: true });
      expect(other.version).not.toBe(first.version);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));

  it("keeps the current build when a new one has fewer usable sources, unless forced", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fetch-guard-"));
    try {
      cpSync(join(inject("datasetDataDir"), "datasets"), join(dir, "datasets"), { recursive: true });
      const pointer = join(dir, "datasets", "ip", "current");
      const before = readFileSync(pointer, "utf8");
      const kept = await buildIpDataset({ ...npm, dataDir: dir, sourcesDir: join(dir, "no-such-folder"), snapshot: false });
      expect(kept.madeCurrent).toBe(false);
      expect(kept.summary).toMatch(/^kept ip-\S+ aside: 0\/\d+ listed sources \+ 1\/\d+ bot registries usable, 1 in all against \d+ in the current build; /);
      expect(readFileSync(pointer, "utf8")).toBe(before);
      // The same folder over the snapshot is as good as the current build: it is made current.
      const same = await buildIpDataset({ ...npm, dataDir: dir, sourcesDir: join(dir, "no-such-folder") });
      expect(same.madeCurrent).toBe(true);
      const forced = await buildIpDataset({ ...npm, dataDir: dir, sourcesDir: join(dir, "no-such-folder"), snapshot: false, force: true });
      expect(forced.madeCurrent).toBe(true);
      expect(readFileSync(pointer, "utf8").trim()).toBe(forced.version);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));
});
