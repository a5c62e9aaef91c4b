import { ApiError } from "../errors.js";

/** Enrichment datasets of GET /v1/ip/{ip} (`include`). */
export const IP_DATASETS = ["region", "company", "rdns"] as const;
export type IpDatasetName = (typeof IP_DATASETS)[number];

/**
 * Parses `include`: comma-separated dataset names or `all`. Unknown names: 400 VALIDATION_ERROR
 * naming the field (the generic code; docs/api.md, "Decisions where the product left things open").
 */
export function parseInclude(raw: string | undefined): IpDatasetName[] {
  if (raw === undefined || raw === "") return NONE;
  // Clients send the same few include strings over and over: parse each once.
  const cached = includeCache.get(raw);
  if (cached) return cached;
  const parsed = parseIncludeUncached(raw);
  if (includeCache.size >= 256) includeCache.clear();
  includeCache.set(raw, parsed);
  return parsed;
}

const NONE: IpDatasetName[] = Object.freeze([]) as unknown as IpDatasetName[];
const includeCache = new Map<string, IpDatasetName[]>();

function parseIncludeUncached(raw: string): IpDatasetName[] {
  const out = new Set<IpDatasetName>();
  for (const part of raw.split(",")) {
    const name = part.trim().toLowerCase();
    if (name === "all") IP_DATASETS.forEach((d) => out.add(d));
    else if ((IP_DATASETS as readonly string[]).includes(name)) out.add(name as IpDatasetName);
    else throw new ApiError("VALIDATION_ERROR", `query.include: unknown dataset '${part.trim().slice(0, 40)}'; expected a comma-separated list of ${IP_DATASETS.join(", ")} or all.`);
  }
  return Object.freeze([...out]) as unknown as IpDatasetName[];
}
