import { describe, expect, it } from "vitest";
import { parseArgs } from "../../scripts/data-build.js";
import { fetchTarget } from "../../scripts/sources/acquire.js";
import type { FileSource } from "../../scripts/sources/manifest.js";

describe("data-build command line", () => {
  it("reads --sources, --fetch and --fetch-mirror in both spellings", () => {
    expect(parseArgs([])).toEqual({ ifMissing: false, check: false, fetch: false, force: false, snapshot: true, logRecords: false });
    expect(parseArgs(["--if-missing", "--log-records"])).toMatchObject({ ifMissing: true, logRecords: true });
    expect(parseArgs(["--force"])).toMatchObject({ force: true });
    expect(parseArgs(["--no-snapshot", "--sources", "d"])).toMatchObject({ snapshot: false, sourcesDir: "d" });
    expect(parseArgs(["--sources", "/srv/sources"])).toMatchObject({ sourcesDir: "/srv/sources", fetch: false });
    expect(parseArgs(["--sources=/srv/sources", "--if-missing"])).toMatchObject({ sourcesDir: "/srv/sources", ifMissing: true });
    expect(parseArgs(["--fetch", "--fetch-mirror", "http://mirror.local/data"])).toMatchObject({ fetch: true, fetchMirror: "http://mirror.local/data" });
    expect(parseArgs(["--check", "--fetch", "--sources", "d"])).toMatchObject({ check: true, fetch: true, sourcesDir: "d" });
  });

  it("refuses what it does not understand", () => {
    expect(parseArgs(["--sauces", "x"])).toMatch(/Unknown option '--sauces'/);
    expect(parseArgs(["--sources"])).toMatch(/--sources <value>' argument missing/);
    expect(parseArgs(["--sources="])).toMatch(/--sources needs a value/);
    expect(parseArgs(["stray"])).toMatch(/Unexpected argument 'stray'/);
    expect(parseArgs(["--fetch-mirror", "http://m"])).toMatch(/--fetch-mirror needs --fetch/);
    expect(parseArgs(["--fetch", "--fetch-mirror", "ftp://m"])).toMatch(/http\(s\) URL/);
    expect(parseArgs(["--check", "--if-missing"])).toMatch(/do not go together/);
  });
});

describe("fetchTarget", () => {
  const source: FileSource = {
    id: "linode", kind: "cloud", format: "linode-geofeed-json", upstream: "https://geoip.linode.com/", upstream_format: "geofeed-csv",
    path: "cloud/jonhadfield-cloud-ips/linode.json", licence: "x", provider: "linode",
  };

  it("downloads the upstream in its own format, or the mirror's copy in the snapshot format", () => {
    expect(fetchTarget(source)).toEqual({ url: "https://geoip.linode.com/", format: "geofeed-csv" });
    expect(fetchTarget(source, "http://mirror.local/data/")).toEqual({ url: "http://mirror.local/data/cloud/jonhadfield-cloud-ips/linode.json", format: "linode-geofeed-json" });
  });
});
