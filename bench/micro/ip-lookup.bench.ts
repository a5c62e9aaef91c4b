/**
 * IP base lookup: our typed-array range tables against mmdb-lib and an lmdb range cursor.
 *
 *   node dist/bench/micro/ip-lookup.bench.js
 *
 * Uses the current build under DATA_DIR (building one first if there is none). Each contender
 * answers the same 10k addresses per iteration; figures are per lookup. Answers are checked
 * against each other before anything is timed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { open } from "lmdb";
import { Reader } from "mmdb-lib";
import { Bench } from "tinybench";
import { SPECIAL_PURPOSE_RANGES, buildIpDataset, cidrRanges } from "../../scripts/data-build.js";
import { dataDirFromEnv } from "../../src/config/index.js";
import { IP_KEYS, currentIpDatasetDir, openIpDataset, type IpBase } from "../../src/datasets/ip-dataset.js";
import { decodeTable, type Ipv4Table } from "../../src/datasets/ip-table.js";
import { formatIp, ipv6WordsToBigInt, parseIp, type ParsedIp } from "../../src/shared/ip.js";

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

const hasAnswer = (r: IpBase) => r.asn !== null || r.country !== null;

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
    if (reparsed && reparsed.version === ip.version) out.push(reparsed);
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
async function lmdbContender(path: string, table: Ipv4Table, width: 1 | 4, records: IpBase[]): Promise<(ip: ParsedIp) => IpBase | null> {
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
  const dataDir = dataDirFromEnv(process.env);
  if (!currentIpDatasetDir(dataDir)) {
    console.log(`no IP dataset in ${dataDir}; building one`);
    await buildIpDataset({ dataDir, log: (line) => console.log(`  ${line}`) });
  }
  const ds = openIpDataset(dataDir);
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
  console.log(`dataset ${ds.meta.version}: ${v4.values.length} IPv4 ranges, ${v6.values.length} IPv6 ranges`);
  console.log(`tinybench: ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up; ${SAMPLE} addresses per iteration\n`);

  try {
    for (const [family, table, width, mmdb] of [["IPv4", v4, 1, mmdb4], ["IPv6", v6, 4, mmdb6]] as const) {
      const parsed = sampleAddresses(table, width);
      const texts = parsed.map(formatIp);
      // Record objects by table value, so the lmdb contender returns what the typed array returns.
      const recordOf = new Map<number, IpBase>();
      for (let i = 0; i < table.values.length; i++) {
        const probe: ParsedIp = width === 1 ? { version: 4, v4: table.starts[i]!, mapped: false } : { version: 6, words: table.starts.slice(i * 4, i * 4 + 4) };
        recordOf.set(table.values[i]!, ds.lookup(probe));
      }
      const recordList: IpBase[] = [];
      for (const [index, rec] of recordOf) recordList[index] = rec;
      const lmdbLookup = await lmdbContender(join(tmp, family), table, width, recordList);

      const contenders: Contender[] = [
        {
          name: "typed array, pre-parsed",
          lookup: (i) => ds.lookup(parsed[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (hasAnswer(ds.lookup(parsed[i]!))) found++;
            return found;
          },
        },
        {
          name: "parseIp + typed array",
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
        {
          name: "lmdb range cursor, pre-parsed",
          lookup: (i) => lmdbLookup(parsed[i]!),
          batch: () => {
            let found = 0;
            for (let i = 0; i < SAMPLE; i++) if (lmdbLookup(parsed[i]!) !== null) found++;
            return found;
          },
        },
      ];
      checkAgreement(family, contenders, parsed.length);

      const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
      const found = new Map<string, number>();
      for (const c of contenders) bench.add(c.name, () => void found.set(c.name, c.batch()));
      await bench.run();
      console.log(`${family}: answered per ${SAMPLE}: ${[...found].map(([name, n]) => `${name} ${n}`).join(", ")}`);
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
    }
  } finally {
    ds.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Refuses to time contenders that disagree: same ASN for ours vs lmdb, same country for ours vs mmdb. */
function checkAgreement(family: string, contenders: Contender[], n: number): void {
  const [ours, viaParse, mmdb, lmdb] = contenders;
  for (let i = 0; i < n; i++) {
    const a = ours!.lookup(i) as IpBase;
    const b = viaParse!.lookup(i) as IpBase;
    const m = mmdb!.lookup(i) as { country_code?: string } | null;
    const l = lmdb!.lookup(i) as IpBase | null;
    const mmdbCountry = m?.country_code ?? null;
    if (a !== b || (l ?? { asn: null }).asn !== a.asn) throw new Error(`${family} sample ${i}: contenders disagree on ASN`);
    if (a.country !== mmdbCountry) throw new Error(`${family} sample ${i}: country ${a.country} vs mmdb ${mmdbCountry}`);
  }
}

await main();
