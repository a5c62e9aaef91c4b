import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { isNpmSource, loadManifest } from "../../scripts/sources/manifest.js";
import { sourcesLayoutDir } from "./dirs.js";

/**
 * data/sources.json against a full directory of the sources layout (the folder the snapshot was
 * taken from): every file of it is used, excluded with a reason, or withheld; none is forgotten.
 */
const DIR = sourcesLayoutDir();
const manifest = loadManifest();

/** Every file under dir, as paths relative to root. */
function walk(dir: string, root: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path, root) : [relative(root, path)];
  });
}

describe("data/sources.json against the sources folder", () => {
  it("lists only paths that exist there", () => {
    for (const s of manifest.sources) if (!isNpmSource(s)) expect(existsSync(join(DIR, s.path)), `${s.id}: ${s.path}`).toBe(true);
    for (const e of manifest.excluded) expect(existsSync(join(DIR, e.path)), e.path).toBe(true);
    for (const b of manifest.bots) if ("path" in b) expect(existsSync(join(DIR, b.path)), b.id).toBe(true);
    for (const e of manifest.evaluation) expect(existsSync(join(DIR, e.path)), e.id).toBe(true);
  });

  it("accounts for every IP-range, bot and ASN file: used or excluded with a reason", () => {
    const botPaths = manifest.bots.flatMap((b) => ("path" in b ? [b.path] : []));
    const listed = new Set([...manifest.sources.flatMap((s) => (isNpmSource(s) ? [] : [s.path])), ...botPaths, ...manifest.excluded.map((e) => e.path)]);
    const files = ["asn", "bots", "cloud", "proxy", "scanner", "tor", "vpn"].flatMap((d) => walk(join(DIR, d), DIR));
    expect(files.length).toBeGreaterThan(250);
    expect(files.filter((f) => !listed.has(f))).toEqual([]);
  });
});
