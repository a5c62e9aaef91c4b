import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSnapshot, layoutPaths, snapshotDates, writeSnapshot } from "../../scripts/data-snapshot.js";
import { loadManifest, type FileSource, type Manifest } from "../../scripts/sources/manifest.js";
import { SNAPSHOT_DIR, extractSnapshot, loadSnapshot, readSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";

const snapshot = loadSnapshot();
const manifest = loadManifest();

describe("the repository's snapshot (data/snapshot/)", () => {
  it("matches its manifest: every file's sha256 and row count, every shippable path present", () => {
    expect(checkSnapshot(snapshot, manifest)).toEqual([]);
  });

  it("records upstream, licence, checksum, rows and the date taken for every file", () => {
    expect(snapshot.manifest.files.length).toBeGreaterThan(200);
    for (const f of snapshot.manifest.files) {
      expect(f.licence, f.path).not.toBe("");
      expect(f.taken, f.path).toMatch(/^\d{4}-\d{2}-\d{2}/);
      expect(f.rows, f.path).toBeGreaterThan(0);
      expect(existsSync(join(SNAPSHOT_DIR, f.file)), f.file).toBe(true);
    }
    const aws = snapshot.files.get("cloud/jonhadfield-cloud-ips/aws.json")!;
    expect(aws).toMatchObject({ upstream: "https://ip-ranges.amazonaws.com/ip-ranges.json", licence: expect.stringMatching(/Apache-2\.0/), rows: 16817 });
  });

  it("stays small: the whole snapshot under 3 MB gzipped", () => {
    const total = snapshot.manifest.files.reduce((n, f) => n + readFileSync(join(SNAPSHOT_DIR, f.file)).length, 0);
    expect(total).toBeLessThan(3_000_000);
  });

  it("withholds the unlicensed trees and says why, per file", () => {
    const withheld = [...snapshot.withheld.values()];
    expect(withheld.length).toBeGreaterThan(0);
    for (const w of withheld) expect(w.reason).toMatch(/declares no licence/);
    expect(snapshot.withheld.has("cloud/maciejporebski-azure-ips/serviceTags/AzureCloud/serviceTag.json")).toBe(true);
  });

  it("reads a source through the chain's snapshot step, and reports withheld and unknown paths", () => {
    const got = readSnapshot({ path: "tor/alireza-rezaee-tor-nodes/latest.exits.csv", upstream: "https://x.test", format: "tor-onionoo-csv" }, snapshot);
    expect(got).toMatchObject({ status: "ok", format: "tor-onionoo-csv", note: null, taken: expect.stringMatching(/^\d{4}-/) });
    const withheld = readSnapshot({ path: "bots/anthemaker-goodbots/iplists/yandex.ips", upstream: "https://x.test", format: "cidr-list" }, snapshot);
    expect(withheld).toMatchObject({ status: "missing", reason: expect.stringMatching(/^withheld from the snapshot \(licence: none declared/) });
    expect(readSnapshot({ path: "no/such/file.txt", upstream: "https://x.test", format: "cidr-list" }, snapshot)).toMatchObject({ status: "missing", reason: "not in the snapshot" });
  });

  it("refuses a damaged file: its checksum no longer matches", () => {
    const dir = mkdtempSync(join(tmpdir(), "snapshot-damaged-"));
    try {
      const entry = snapshot.files.get("proxy/monosans-proxy-list/proxies/http.txt")!;
      writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...snapshot.manifest, files: [entry], withheld: [] }));
      const copy = loadSnapshot(dir);
      const source = { path: entry.path, upstream: "https://x.test", format: "host-port-list" };
      expect(readSnapshot(source, copy)).toMatchObject({ status: "failed", reason: expect.stringMatching(/ENOENT/) });
      mkdirSync(dirname(join(dir, entry.file)), { recursive: true });
      writeFileSync(join(dir, entry.file), gzipSync(Buffer.from("1.2.3.4:80\n")));
      expect(readSnapshot(source, copy)).toMatchObject({ status: "failed", reason: expect.stringMatching(/does not match the snapshot manifest/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("snapshotDates", () => {
  it("reads the commit and date under each repository's heading", () => {
    const md = [
      "### `cloud/jonhadfield-cloud-ips/` — jonhadfield/cloud-ips",
      "",
      "Snapshot `a9fd42a4d49b29006fbd0c387023a86615a75ef7` (2026-08-22T00:09:22+00:00). Licence: Apache-2.0.",
      "",
      "### `tor/x/` — someone/x",
      "",
      "no snapshot line here",
    ].join("\n");
    const dates = snapshotDates(md);
    expect([...dates.keys()]).toEqual(["cloud/jonhadfield-cloud-ips/"]);
    expect(dates.get("cloud/jonhadfield-cloud-ips/")).toEqual({ repo: "jonhadfield/cloud-ips", commit: "a9fd42a4d49b29006fbd0c387023a86615a75ef7", date: "2026-08-22" });
  });
});

describe("writeSnapshot", () => {
  // A small manifest: three range sources, one withheld tree, one evaluation list.
  const small: Manifest = {
    ...manifest,
    sources: manifest.sources.filter((s) => ["asn-ipv4", "asn-ipv6", "country-ipv4", "country-ipv6", "tor-exits", "x4bnet-mullvadvpn", "goodbots-yandex"].includes(s.id)),
    bots: manifest.bots.filter((b) => b.id === "ai-robots-txt"),
    evaluation: manifest.evaluation.filter((e) => e.id === "email-role-mixmax"),
  };
  let src: string;
  let server: Server;
  let mirror: string;

  beforeAll(async () => {
    src = mkdtempSync(join(tmpdir(), "snapshot-src-"));
    extractSnapshot(snapshot, src);
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).slice(1);
      if (path.startsWith("tor/")) return void res.writeHead(200).end("<html>rate limited</html>");
      if (!existsSync(join(src, path))) return void res.writeHead(404).end();
      // The Mullvad list changed upstream since the snapshot: one range more.
      if (path.startsWith("vpn/")) return void res.writeHead(200).end(Buffer.concat([readFileSync(join(src, path)), Buffer.from("\n193.32.127.0/24\n")]));
      res.writeHead(200).end(readFileSync(join(src, path)));
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((ok) => server.close(() => ok()));
    rmSync(src, { recursive: true, force: true });
  });

  it("copies from a folder, dates each file, leaves withheld files out, and round-trips byte for byte", async () => {
    const out = mkdtempSync(join(tmpdir(), "snapshot-out-"));
    try {
      writeFileSync(join(src, "SOURCES.md"), "### `tor/alireza-rezaee-tor-nodes/` — alireza-rezaee/tor-nodes\n\nSnapshot `47d10e9b1964` (2026-08-22T21:13:34+00:00).\n");
      const problems = await writeSnapshot({ kind: "from", dir: src, takenDefault: "2026-01-02" }, { dir: out, manifest: small });
      expect(problems).toEqual([]);
      const written = loadSnapshot(out);
      expect([...written.files.keys()].sort()).toEqual(layoutPaths(small).map((p) => p.path).filter((p) => !p.startsWith("bots/anthemaker-goodbots/")).sort());
      expect([...written.withheld.keys()]).toEqual(["bots/anthemaker-goodbots/iplists/yandex.ips"]);
      const tor = written.files.get("tor/alireza-rezaee-tor-nodes/latest.exits.csv")!;
      expect(tor).toMatchObject({ taken: "2026-08-22", origin: "alireza-rezaee/tor-nodes@47d10e9b1964:latest.exits.csv" });
      expect(written.files.get("email/role_local_parts_mixmax.csv")!.taken).toBe("2026-07-30"); // the evaluation list's own date
      expect(written.files.get("bots/ai-robots-txt/robots.json")!.taken).toBe("2026-01-02"); // --taken
      for (const f of written.files.values()) {
        expect(gunzipSync(readFileSync(join(out, f.file))).equals(snapshotBytes(snapshot, f.path)), f.path).toBe(true);
        expect(f.sha256).toBe(snapshot.files.get(f.path)!.sha256);
      }
      expect(checkSnapshot(written, small)).toEqual([]);
      expect(readFileSync(join(out, "LICENCES.md"), "utf8")).toMatch(/\| `tor\/alireza-rezaee-tor-nodes\/` \(1\) \| MIT/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("refreshes by download, keeps the current copy of a drifted or missing download, and never adds a bad file", async () => {
    const out = mkdtempSync(join(tmpdir(), "snapshot-fetch-"));
    try {
      await writeSnapshot({ kind: "from", dir: src, takenDefault: "2026-01-02" }, { dir: out, manifest: small });
      const before = loadSnapshot(out);
      const lines: string[] = [];
      const problems = await writeSnapshot({ kind: "fetch", mirror }, { dir: out, manifest: small, log: (l) => lines.push(l) });
      expect(problems).toEqual([]);
      const after = loadSnapshot(out);
      const today = new Date().toISOString().slice(0, 10);
      const mullvad = after.files.get((small.sources.find((s) => s.id === "x4bnet-mullvadvpn") as FileSource).path)!;
      expect(mullvad).toMatchObject({ taken: today, origin: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/vpn\//) });
      // The Tor list came back as an HTML page: the old copy stays, with its old date.
      expect(after.files.get("tor/alireza-rezaee-tor-nodes/latest.exits.csv")).toEqual(before.files.get("tor/alireza-rezaee-tor-nodes/latest.exits.csv"));
      expect(lines.some((l) => /kept +tor\/alireza-rezaee-tor-nodes\/latest\.exits\.csv: not in the tor-onionoo-csv format/.test(l))).toBe(true);
      // Derived evaluation lists are not downloaded; they stay as they were.
      expect(after.files.get("email/role_local_parts_mixmax.csv")).toEqual(before.files.get("email/role_local_parts_mixmax.csv"));
      // A download identical to the copy keeps the copy and its date.
      expect(after.files.get("bots/ai-robots-txt/robots.json")).toEqual(before.files.get("bots/ai-robots-txt/robots.json"));
      expect(lines.some((l) => /same +bots\/ai-robots-txt\/robots\.json: unchanged since 2026-01-02/.test(l))).toBe(true);
      expect(checkSnapshot(after, small)).toEqual([]);
      // Fetching again finds nothing new: the tracked manifest is not rewritten (not even its date).
      const manifestText = readFileSync(join(out, "manifest.json"), "utf8");
      const again: string[] = [];
      expect(await writeSnapshot({ kind: "fetch", mirror }, { dir: out, manifest: small, log: (l) => again.push(l) })).toEqual([]);
      expect(readFileSync(join(out, "manifest.json"), "utf8")).toBe(manifestText);
      expect(again.at(-1)).toMatch(/^snapshot: unchanged /);
      // No download at all (the mirror down): a problem, and nothing changes.
      const down: string[] = [];
      const offline = await writeSnapshot({ kind: "fetch", mirror: "http://127.0.0.1:9" }, { dir: out, manifest: small, log: (l) => down.push(l) });
      expect(offline).toEqual([expect.stringMatching(/^no download succeeded \(\d+ failed: no network, or the mirror is down\); the snapshot is unchanged$/)]);
      // The summary counts the failures as the downloads line does.
      const failedDownloads = /^downloads: 0 of (\d+) fetched; (\d+) failed/.exec(down.find((l) => l.startsWith("downloads: ")) ?? "");
      expect(failedDownloads?.[1]).toBe(failedDownloads?.[2]);
      expect(down.at(-1)).toBe(`snapshot: unchanged: all ${failedDownloads?.[2]} downloads failed`);
      expect(readFileSync(join(out, "manifest.json"), "utf8")).toBe(manifestText);
      // With nothing to keep, a file that cannot be had is a problem.
      const empty = mkdtempSync(join(tmpdir(), "snapshot-empty-"));
      try {
        const failed = await writeSnapshot({ kind: "fetch", mirror }, { dir: empty, manifest: small });
        expect(failed).toEqual(expect.arrayContaining([expect.stringMatching(/^tor\/alireza-rezaee-tor-nodes\/latest\.exits\.csv: not in the tor-onionoo-csv format.*and the snapshot has no copy$/)]));
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
