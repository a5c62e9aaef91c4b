/**
 * IP lookup: the full facts record (ASN, org, country, every type and risk flag, names, company,
 * provenance) from our typed-array range tables, against mmdb-lib's get on the country MMDB
 * (country only) and an lmdb range cursor, on the same addresses in the same run.
 *
 *   node dist/bench/micro/ip-lookup.bench.js
 *
 * Uses the current build under DATA_DIR (building one from npm + the snapshot first when there
 * is none or it lacks the range sources; the build's source line is printed).
 * Each contender answers the same 10k addresses per iteration; figures are per lookup. Answers
 * are checked against each other before anything is timed. Also prints the process RSS (after a
 * full GC) before and after opening the dataset, and with every facts object built (they are
 * built on first use, so that is the most a long-running reader can hold).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { open } from "lmdb";
import { Reader } from "mmdb-lib";
import { Bench } from "tinybench";
import { SPECIAL_PURPOSE_RANGES, cidrRanges } from "../../scripts/data-build.js";
import { ensureIpDataset } from "../lib/context.js";
import { IP_KEYS, currentIpDatasetDir, openIpDataset, type IpFacts } from "../../src/datasets/ip-dataset.js";
import { decodeTable, type Ipv4Table } from "../../src/datasets/ip-table.js";
import { formatIp, ipv6WordsToBigInt, parseIp, type ParsedIp } from "../../src/shared/ip.js";

// A collector for the memory figures, so they show what stays alive rather than garbage.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

const SAMPLE = 10_000;
const TIME_MS = 1500;
const WARMUP_MS = 300;

/** One way of answering "what is this address". */
interface Contender {
  name: string;
  /** Looks up address i of the sample; returns what it found (for the cross-check). */
  lookup(i: number): unknown;
  /**
   * Looks up the whole sample; returns how many got any answer. Each contender writes its own loop:
   * a loop shared by all of them would make the call inside it megamorphic and add ~50 ns to
   * every lookup, drowning the difference being measured.
   */
  batch(): number;
}

const hasAnswer = (r: IpFacts) => r.asn !== null || r.country !== null;

// Deterministic sample so runs compare.
let seed = 20260617;
function rand(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed;
}

const special = { 1: cidrRanges(SPECIAL_PURPOSE_RANGES[4], 4), 4: cidrRanges(SPECIAL_PURPOSE_RANGES[6], 6) };

/** Random addresses inside known ranges (so every contender does a full lookup), plus 10% anywhere. */
function sampleAddresses(table: Ipv4Table, width: 1 | 4): ParsedIp[] {
  const n = table.values.length;
  const out: ParsedIp[] = [];
  while (out.length < SAMPLE) {
    const i = rand() % n;
    const words = new Uint32Array(4);
    for (let k = 0; k < width; k++) words[4 - width + k] = table.starts[i * width + k]!;
    // Perturb the low word within the range when that stays inside it, else take the start.
    const lastStart = table.starts[i * width + width - 1]!;
    const lastEnd = table.ends[i * width + width - 1]!;
    const sameHigh = width === 1 || table.starts.subarray(i * 4, i * 4 + 3).every((w, k) => w === table.ends[i * 4 + k]);
    if (sameHigh && lastEnd > lastStart) words[3] = lastStart + (rand() % (lastEnd - lastStart + 1));
    if (out.length % 10 === 9) for (let k = 4 - width; k < 4; k++) words[k] = rand();
    const ip: ParsedIp = width === 1 ? { version: 4, v4: words[3]!, mapped: false } : { version: 6, words };
    const reparsed = parseIp(formatIp(ip));
    // Our builder removes special-purpose space that mmdb still answers for; keep the sample out of it.
    const asBig = width === 1 ? BigInt(words[3]!) : ipv6WordsToBigInt(words);
    if (special[width].some((r) => r.start <= asBig && asBig <= r.end)) continue;
    // Keep our own object, not parseIp's: a sample of 20k parse results kept alive teaches V8 to
    // allocate parseIp's objects in old space (pretenuring), and every later parse then pays for
    // full GCs that a server, which drops each parse result within the request, never sees.
    if (reparsed && reparsed.version === ip.version) out.push(ip);
  }
  return out;
}

function toKey(ip: ParsedIp): Buffer {
  const key = Buffer.alloc(ip.version === 4 ? 4 : 16);
  if (ip.version === 4) key.writeUInt32BE(ip.v4);
  else for (let k = 0; k < 4; k++) key.writeUInt32BE(ip.words[k]!, k * 4);
  return key;
}

/** An lmdb database keyed by big-endian range start, value = big-endian end + record index. */
async function lmdbContender(path: string, table: Ipv4Table, width: 1 | 4, records: IpFacts[]): Promise<(ip: ParsedIp) => IpFacts | null> {
  const db = open({ path, keyEncoding: "binary", encoding: "binary", noSubdir: false });
  const bytes = width * 4;
  await db.transaction(() => {
    for (let i = 0; i < table.values.length; i++) {
      const key = Buffer.alloc(bytes);
      const value = Buffer.alloc(bytes + 4);
      for (let k = 0; k < width; k++) {
        key.writeUInt32BE(table.starts[i * width + k]!, k * 4);
        value.writeUInt32BE(table.ends[i * width + k]!, k * 4);
      }
      value.writeUInt32BE(table.values[i]!, bytes);
      db.put(key, value);
    }
  });
  return (ip) => {
    const key = toKey(ip);
    // Reverse from the address: the first key at or below it is the only range that can hold it.
    for (const { value } of db.getRange({ start: key, reverse: true, limit: 1 })) {
      const v = value as Buffer;
      if (Buffer.compare(v.subarray(0, bytes), key) < 0) return null;
      return records[v.readUInt32BE(bytes)] ?? null;
    }
    return null;
  };
}

async function main(): Promise<void> {
  const dataDir = await ensureIpDataset();
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const rss = () => {
    collect();
    collect();
    return process.memoryUsage().rss;
  };
  const rssBefore = rss();
  const ds = openIpDataset(dataDir);
  const rssOpen = rss();
  const dir = currentIpDatasetDir(dataDir)!;
  const raw = open({ path: dir, readOnly: true, encoding: "binary", noSubdir: false });
  const v4 = decodeTable(raw.getBinary(IP_KEYS.v4)!, 1);
  const v6 = decodeTable(raw.getBinary(IP_KEYS.v6)!, 4);
  await raw.close();

  const pkgDir = dirname(createRequire(import.meta.url).resolve("@ip-location-db/geo-whois-asn-country-mmdb/package.json"));
  const mmdb4 = new Reader(readFileSync(join(pkgDir, "geo-whois-asn-country-ipv4.mmdb")));
  const mmdb6 = new Reader(readFileSync(join(pkgDir, "geo-whois-asn-country-ipv6.mmdb")));
  const tmp = mkdtempSync(join(tmpdir(), "ip-lookup-bench-"));

  console.log(`node ${process.version}, ${cpus()[0]?.model ?? "unknown CPU"} (${cpus().length} cores), ${process.platform}/${process.arch}`);
  console.log(`dataset ${ds.meta.version}: ${v4.values.length} IPv4 ranges, ${v6.values.length} IPv6 ranges; source: ${ds.meta.source}`);
  console.log(`RSS before opening ${mib(rssBefore)}, after ${mib(rssOpen)} (+${mib(rssOpen - rssBefore)})`);
  console.log(`tinybench: ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up; ${SAMPLE} addresses per iteration\n`);

  try {
    const families = [["IPv4", v4, 1, mmdb4], ["IPv6", v6, 4, mmdb6]] as const;
    const samples = new Map(families.map(([family, table, width]) => {
      const parsed = sampleAddresses(table, width);
      return [family, { parsed, texts: parsed.map(formatIp) }] as const;
    }));
    // The comparison that matters runs first, on a heap that holds only the dataset and the
    // mmdb files: the lmdb contender's setup below allocates ~1M buffers and builds every facts
    // object, and a heap that large slows the allocating contenders' young-generation GCs.
    for (const [family, , , mmdb] of families) {
      const { parsed, texts } = samples.get(family)!;
      const contenders: Contender[] = [
        {
          name: "facts lookup, pre-parsed",
          lookup: (i) => ds.lookup(parsed[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (hasAnswer(ds.lookup(parsed[i]!))) found++;
            return found;
          },
        },
        {
          name: "parseIp + facts lookup",
          lookup: (i) => ds.lookup(parseIp(texts[i]!)!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (hasAnswer(ds.lookup(parseIp(texts[i]!)!))) found++;
            return found;
          },
        },
        {
          name: "mmdb-lib get (country only)",
          lookup: (i) => mmdb.get(texts[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (mmdb.get(texts[i]!) !== null) found++;
            return found;
          },
        },
      ];
      checkAgreement(family, contenders, parsed.length);
      const bench = await runBench(family, contenders);
      const ratio = bench.perSecond("parseIp + facts lookup") / bench.perSecond("mmdb-lib get (country only)");
      console.log(`${family}: parseIp + facts lookup is ${ratio.toFixed(1)}x mmdb-lib get's lookups/s (target 3x)\n`);
    }
    // Facts objects by table value, so the lmdb contender returns what the typed array returns.
    // Probing every range also builds every facts object: the reader's worst-case memory.
    const recordLists = new Map(families.map(([family, table, width]) => {
      const recordList: IpFacts[] = [];
      for (let i = 0; i < table.values.length; i++) {
        const probe: ParsedIp = width === 1 ? { version: 4, v4: table.starts[i]!, mapped: false } : { version: 6, words: table.starts.slice(i * 4, i * 4 + 4) };
        recordList[table.values[i]!] = ds.lookup(probe);
      }
      return [family, recordList] as const;
    }));
    console.log(`RSS with every facts object built ${mib(rss())} (+${mib(process.memoryUsage().rss - rssOpen)} over the opened dataset)\n`);

    for (const [family, table, width] of families) {
      const { parsed } = samples.get(family)!;
      const recordList = recordLists.get(family)!;
      const lmdbLookup = await lmdbContender(join(tmp, family), table, width, recordList);
      for (let i = 0; i < parsed.length; i++) {
        if ((lmdbLookup(parsed[i]!) ?? { asn: null }).asn !== ds.lookup(parsed[i]!).asn) throw new Error(`${family} sample ${i}: lmdb and typed array disagree on ASN`);
      }
      await runBench(`${family} (lmdb comparison)`, [
        {
          name: "facts lookup, pre-parsed",
          lookup: (i) => ds.lookup(parsed[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (hasAnswer(ds.lookup(parsed[i]!))) found++;
            return found;
          },
        },
        {
          name: "lmdb range cursor, pre-parsed",
          lookup: (i) => lmdbLookup(parsed[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (lmdbLookup(parsed[i]!) !== null) found++;
            return found;
          },
        },
      ]);
    }
  } finally {
    ds.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Times the contenders side by side and prints a table; returns lookups/s by contender name. */
async function runBench(title: string, contenders: Contender[]): Promise<{ perSecond(name: string): number }> {
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  const found = new Map<string, number>();
  for (const c of contenders) bench.add(c.name, () => void found.set(c.name, c.batch()));
  await bench.run();
  console.log(`${title}: answered per ${SAMPLE}: ${[...found].map(([name, n]) => `${name} ${n}`).join(", ")}`);
  console.table(
    bench.tasks.map((t) => {
      const r = t.result;
      if (r.state !== "completed") return { contender: t.name, state: r.state };
      return {
        contender: t.name,
        "ns/lookup (mean)": +((r.latency.mean * 1e6) / SAMPLE).toFixed(1),
        "ns/lookup (p50)": +((r.latency.p50 * 1e6) / SAMPLE).toFixed(1),
        "M lookups/s": +((r.throughput.mean * SAMPLE) / 1e6).toFixed(2),
        "rme %": +r.latency.rme.toFixed(2),
        iterations: r.latency.samplesCount,
      };
    }),
  );
  return {
    perSecond(name) {
      const r = bench.tasks.find((t) => t.name === name)?.result;
      return r?.state === "completed" ? r.throughput.mean * SAMPLE : NaN;
    },
  };
}

/** Refuses to time contenders that disagree: one shared object with and without parsing, same country as mmdb. */
function checkAgreement(family: string, contenders: Contender[], n: number): void {
  const [ours, viaParse, mmdb] = contenders;
  for (let i = 0; i < n; i++) {
    const a = ours!.lookup(i) as IpFacts;
    const b = viaParse!.lookup(i) as IpFacts;
    const m = mmdb!.lookup(i) as { country_code?: string } | null;
    const mmdbCountry = m?.country_code ?? null;
    if (a !== b) throw new Error(`${family} sample ${i}: parsed and pre-parsed lookups returned different objects`);
    if (a.country !== mmdbCountry) throw new Error(`${family} sample ${i}: country ${a.country} vs mmdb ${mmdbCountry}`);
  }
}

await main();
