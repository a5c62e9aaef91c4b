import { existsSync } from "node:fs";

/**
 * The folders `npm run test:corpora -- TEXT_DIR [--sources DIR]` was given: the labelled text
 * corpora (FS_CORPORA_TEXT_DIR) and, optionally, a full directory of the sources layout
 * (FS_SOURCES_DIR). These tests read data that does not ship with the repository; they fail,
 * never skip, when their folder is missing.
 */
function required(name: string, how: string): string {
  const dir = process.env[name];
  if (!dir) throw new Error(`${name} is not set: run these tests with \`npm run test:corpora -- ${how}\``);
  if (!existsSync(dir)) throw new Error(`${name}=${dir} does not exist`);
  return dir;
}

/** The text corpora folder (its files as listed in scripts/text/corpora.ts). */
export const textCorporaDir = (): string => required("FS_CORPORA_TEXT_DIR", "TEXT_DIR");

/** A directory of the sources layout (the folder data/snapshot/ was taken from). */
export const sourcesLayoutDir = (): string => required("FS_SOURCES_DIR", "TEXT_DIR --sources DIR");
