/**
 * bots.json: the merged bot registry stored in an IP dataset version directory, next to the lmdb
 * environment, by scripts/data-build.ts. Parsed with zod when a dataset is opened (a file read is
 * an edge, so its contents are checked); a version without the file has no registry.
 *
 *   { "format": 1, "stats": MergeStats, "bots": BotEntry[] }
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { BOT_SOURCE_NAMES, type BotEntry, type BotKind, type MergeStats } from "./bot-registry.js";

/** File name inside a version directory. */
export const BOT_REGISTRY_FILE = "bots.json";
/** Bump when the shape of bots.json changes. */
export const BOT_REGISTRY_FORMAT = 1;

/** The file's content. */
export interface BotRegistryFile {
  format: typeof BOT_REGISTRY_FORMAT;
  stats: MergeStats;
  bots: BotEntry[];
}

const BOT_KINDS = [
  "search_crawler", "ai_crawler", "ai_search", "ai_assistant", "monitor", "preview", "seo", "feed", "archive", "scraper", "tool", "other",
] as const satisfies readonly BotKind[];

const count = z.number().int().nonnegative();
const entrySchema = z
  .object({
    bot_id: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
    name: z.string().min(1),
    operator: z.string().min(1).nullable(),
    kind: z.enum(BOT_KINDS),
    patterns: z.array(z.string().min(1)).min(1),
    verification: z
      .object({ ranges: z.boolean(), range_ids: z.array(z.string().min(1)), rdns_masks: z.array(z.string().min(1)) })
      .refine((v) => v.ranges === v.range_ids.length > 0, "ranges must say whether range_ids is non-empty"),
    sources: z.array(z.enum(BOT_SOURCE_NAMES)).min(1),
  })
  .strict();

const fileSchema = z
  .object({
    format: z.literal(BOT_REGISTRY_FORMAT),
    stats: z.object({
      per_source: z.object(Object.fromEntries(BOT_SOURCE_NAMES.map((s) => [s, z.object({ entries: count, bad: count })])) as Record<
        (typeof BOT_SOURCE_NAMES)[number],
        z.ZodObject<{ entries: typeof count; bad: typeof count }>
      >),
      merged: count,
      with_operator: count,
      with_verification: count,
      with_ranges: count,
      operators: count,
      operators_with_verification: count,
    }),
    bots: z.array(entrySchema),
  })
  .superRefine((f, ctx) => {
    if (f.stats.merged !== f.bots.length) ctx.addIssue({ code: "custom", message: `stats.merged is ${f.stats.merged} but there are ${f.bots.length} bots` });
    const ids = new Set(f.bots.map((b) => b.bot_id));
    if (ids.size !== f.bots.length) ctx.addIssue({ code: "custom", message: "bot ids are not unique" });
  });

/**
 * Parses a bots.json document.
 * @throws Error naming `where` and the first failing field path.
 */
export function parseBotRegistryFile(json: unknown, where: string): BotRegistryFile {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${where}: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid"}; rebuild the dataset`);
  }
  return parsed.data as BotRegistryFile;
}

/**
 * Reads `<dir>/bots.json`.
 * @returns the registry, or null when the version has no such file (built before the registry existed).
 * @throws Error when the file exists but is not valid JSON or not a registry of this format.
 */
export function readBotRegistryFile(dir: string): BotRegistryFile | null {
  const path = join(dir, BOT_REGISTRY_FILE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not JSON (${(err as Error).message}); rebuild the dataset`);
  }
  return parseBotRegistryFile(json, path);
}

/** Serialises a registry for bots.json (one bot per line keeps diffs between builds readable). */
export function formatBotRegistryFile(file: BotRegistryFile): string {
  const bots = file.bots.map((b) => `    ${JSON.stringify(b)}`).join(",\n");
  return `{\n  "format": ${file.format},\n  "stats": ${JSON.stringify(file.stats)},\n  "bots": [\n${bots}\n  ]\n}\n`;
}
