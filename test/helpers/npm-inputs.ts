import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { IpSourceOptions } from "../../scripts/data-build.js";
import { loadManifest } from "../../scripts/sources/manifest.js";

/** The ASN inputs a build reads from @ip-location-db/asn, by manifest id. */
const ASN_FILES = { "asn-ipv4": "asn-ipv4-num.csv", "asn-ipv6": "asn-ipv6-num.csv" } as const;

/**
 * buildIpDataset options that read the ASN CSVs cut down to about `rows` rows each (every n-th
 * row, so still sorted and without overlaps), with the manifest's minimum row counts lowered to
 * match: for tests about a build's mechanics (what it fetches, reuses, keeps aside, reports, and
 * the listed sources' facts), not about facts the npm packages give real addresses. Such a build
 * takes about 4 s of CPU instead of 13 (the country databases stay whole: an mmdb file cannot be
 * cut). The files are written to `dir`, which the caller removes.
 * @example await buildIpDataset({ dataDir, snapshot: false, ...smallNpmInputs(tmp) })
 */
export function smallNpmInputs(dir: string, rows = 5000): Required<Pick<IpSourceOptions, "files" | "manifest">> {
  const asnDir = dirname(createRequire(import.meta.url).resolve("@ip-location-db/asn/package.json"));
  const files: Record<string, string> = {};
  for (const [id, name] of Object.entries(ASN_FILES)) {
    const lines = readFileSync(join(asnDir, name), "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const step = Math.max(1, Math.floor(lines.length / rows));
    const path = join(dir, name);
    writeFileSync(path, `${lines.filter((_, i) => i % step === 0).join("\n")}\n`);
    files[id] = path;
  }
  const manifest = loadManifest();
  const minRows = Math.floor(rows / 2);
  return { files, manifest: { ...manifest, sources: manifest.sources.map((s) => (s.id in ASN_FILES ? { ...s, min_rows: minRows } : s)) } };
}
