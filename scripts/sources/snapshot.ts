/**
 * The repository's snapshot of the sources layout (data/snapshot/): one gzipped file per path of
 * data/sources.json that its licence lets us redistribute, and manifest.json saying, per file,
 * where it comes from, its licence, the SHA-256 and row count of its uncompressed bytes, and when
 * it was taken; and, per withheld file, why it is not here. A fresh clone builds the full dataset
 * from it with no network (scripts/data-build.ts); scripts/data-snapshot.ts rewrites it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { z } from "zod";
import { REPO_ROOT } from "../../src/config/index.js";
import type { AcquirableSource, Acquired } from "./acquire.js";

/** Where the snapshot lives in the repository. */
export const SNAPSHOT_DIR = resolve(REPO_ROOT, "data/snapshot");
/** Version of manifest.json's shape. */
export const SNAPSHOT_FORMAT = 1;

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const relativePath = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/);

const snapshotFileSchema = z
  .object({
    /** Path in the sources layout (as in data/sources.json). */
    path: relativePath,
    /** The gzipped file, relative to the snapshot directory (`<path>.gz`). */
    file: relativePath,
    /** Format of the bytes (a parser name of scripts/sources/parsers.ts, a bot format, or "csv"). */
    format: z.string().min(1),
    /** Manifest ids (sources, bots, evaluation) that read this file. */
    used_by: z.array(z.string()).min(1),
    /** Where it comes from: the address --fetch downloads, or the list it was derived from. */
    upstream: z.string().nullable(),
    licence: z.string().min(1),
    /** SHA-256 of the uncompressed bytes. */
    sha256: sha256Hex,
    /** Uncompressed size. */
    bytes: z.number().int().nonnegative(),
    /** Data rows (range and ASN rows, registry entries, CSV records). */
    rows: z.number().int().nonnegative(),
    /** When the copy was taken from upstream: YYYY-MM-DD or an ISO 8601 timestamp. */
    taken: z.string().regex(/^\d{4}-\d{2}-\d{2}/),
    /** What was copied: a repository and commit, or the URL downloaded. */
    origin: z.string().min(1),
  })
  .strict();

const withheldFileSchema = z
  .object({
    path: relativePath,
    used_by: z.array(z.string()).min(1),
    upstream: z.string().nullable(),
    licence: z.string().min(1),
    reason: z.string().min(1),
  })
  .strict();

const snapshotManifestSchema = z
  .object({
    generated_by: z.string(),
    format: z.literal(SNAPSHOT_FORMAT),
    /** When manifest.json was last written. */
    written_at: z.string(),
    files: z.array(snapshotFileSchema),
    withheld: z.array(withheldFileSchema),
  })
  .strict();

export type SnapshotFile = z.infer<typeof snapshotFileSchema>;
export type WithheldFile = z.infer<typeof withheldFileSchema>;
export type SnapshotManifest = z.infer<typeof snapshotManifestSchema>;

/** An opened snapshot: its manifest indexed by path. Files are read (and checked) on demand. */
export interface Snapshot {
  readonly dir: string;
  readonly manifest: SnapshotManifest;
  readonly files: ReadonlyMap<string, SnapshotFile>;
  readonly withheld: ReadonlyMap<string, WithheldFile>;
}

/**
 * Opens the snapshot in `dir` (default data/snapshot). A directory without manifest.json is an
 * empty snapshot (every source reads as missing); a manifest that does not parse throws.
 */
export function loadSnapshot(dir: string = SNAPSHOT_DIR): Snapshot {
  const at = join(dir, "manifest.json");
  if (!existsSync(at)) {
    return { dir, manifest: { generated_by: "", format: SNAPSHOT_FORMAT, written_at: "", files: [], withheld: [] }, files: new Map(), withheld: new Map() };
  }
  const parsed = snapshotManifestSchema.safeParse(JSON.parse(readFileSync(at, "utf8")));
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${at} is invalid: ${problems.join("; ")}`);
  }
  const manifest = parsed.data;
  return {
    dir,
    manifest,
    files: new Map(manifest.files.map((f) => [f.path, f])),
    withheld: new Map(manifest.withheld.map((w) => [w.path, w])),
  };
}

/**
 * The uncompressed bytes of one snapshot file, checked against the manifest's SHA-256.
 * @throws Error when the path is not in the snapshot, or its file is missing or damaged.
 */
export function snapshotBytes(snapshot: Snapshot, path: string): Buffer {
  const entry = snapshot.files.get(path);
  if (!entry) {
    const withheld = snapshot.withheld.get(path);
    throw new Error(withheld ? `${path} is withheld from the snapshot: ${withheld.reason}` : `${path} is not in the snapshot`);
  }
  const bytes = gunzipSync(readFileSync(join(snapshot.dir, entry.file)));
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== entry.sha256) throw new Error(`${entry.file} does not match the snapshot manifest (sha256 ${sha}, manifest ${entry.sha256})`);
  return bytes;
}

/** Reads one source from the snapshot; never throws (a withheld or damaged file is reported). */
export function readSnapshot(source: AcquirableSource, snapshot: Snapshot): Acquired {
  const entry = snapshot.files.get(source.path);
  if (!entry) {
    const withheld = snapshot.withheld.get(source.path);
    const reason = withheld ? `withheld from the snapshot (licence: ${withheld.licence})` : "not in the snapshot";
    return { status: "missing", reason, origin: null };
  }
  const origin = join(snapshot.dir, entry.file);
  try {
    return { status: "ok", bytes: snapshotBytes(snapshot, source.path), origin, format: entry.format, note: null, taken: entry.taken };
  } catch (err) {
    return { status: "failed", reason: `snapshot: ${(err as Error).message}`, origin };
  }
}

/**
 * Writes every snapshot file, uncompressed, under `target` in the sources layout (for tools that
 * read a directory, such as a mirror server in tests). Returns the paths written.
 */
export function extractSnapshot(snapshot: Snapshot, target: string): string[] {
  for (const entry of snapshot.files.values()) {
    const to = join(target, entry.path);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, snapshotBytes(snapshot, entry.path));
  }
  return [...snapshot.files.keys()];
}

/** Parses and checks a snapshot manifest object (used by the writer before it saves one). */
export function parseSnapshotManifest(json: unknown): SnapshotManifest {
  const parsed = snapshotManifestSchema.safeParse(json);
  if (!parsed.success) throw new Error(`snapshot manifest is invalid: ${parsed.error.issues[0]?.message ?? "?"}`);
  return parsed.data;
}
