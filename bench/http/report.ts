/** Medians over interleaved rounds, and the markdown the HTTP runner prints and saves. */
import type { Measurement } from "./generators.js";

/** All rounds of one scenario under one generator. */
export interface Series {
  scenario: string;
  generator: string;
  target?: number;
  /** Scenario.cpuTarget: service µs per response. */
  cpuTarget?: number;
  runs: Measurement[];
  /** Responses without the expected status, over all rounds. */
  unexpected: number;
  /** Connection errors and timeouts, over all rounds. */
  socketErrors: number;
}

/** One table row: medians of a series and its ratio to the baseline of the same generator. */
export interface Row {
  series: Series;
  rps: number;
  minRps: number;
  maxRps: number;
  p50Ms: number;
  p99Ms: number;
  /** null when the baseline was not measured. */
  ratio: number | null;
  verdict: "ok" | "MISSED" | null;
}

/** Median of a non-empty list. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rows for every series that ran, ratios against `baseline` of the same generator. */
export function toRows(series: Series[], baseline: string): Row[] {
  const base = new Map<string, number>();
  for (const s of series) if (s.scenario === baseline && s.runs.length) base.set(s.generator, median(s.runs.map((r) => r.rps)));
  return series
    .filter((s) => s.runs.length > 0)
    .map((s) => {
      const rpsList = s.runs.map((r) => r.rps);
      const rps = median(rpsList);
      const b = base.get(s.generator);
      const ratio = b ? rps / b : null;
      const verdict = s.target === undefined || ratio === null ? null : ratio >= s.target ? "ok" : "MISSED";
      return {
        series: s,
        rps,
        minRps: Math.min(...rpsList),
        maxRps: Math.max(...rpsList),
        p50Ms: median(s.runs.map((r) => r.p50Ms)),
        p99Ms: median(s.runs.map((r) => r.p99Ms)),
        ratio,
        verdict,
      };
    });
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));

/** The results table in markdown. */
export function markdownTable(rows: Row[]): string {
  const lines = [
    "| scenario | generator | req/s (median) | req/s min–max | p50 ms | p99 ms | vs hello | target | result | unexpected responses |",
    "|---|---|--:|--:|--:|--:|--:|--:|---|--:|",
  ];
  for (const r of rows) {
    const s = r.series;
    const bad = s.unexpected + s.socketErrors;
    lines.push(
      `| ${s.scenario} | ${s.generator} | ${int(r.rps)} | ${int(r.minRps)}–${int(r.maxRps)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ` +
        `${r.ratio === null ? "–" : r.ratio.toFixed(2)} | ${s.target === undefined ? "–" : `≥ ${s.target}`} | ${r.verdict === "MISSED" ? "**MISSED**" : (r.verdict ?? "–")} | ` +
        `${bad === 0 ? "0" : `**${bad}**${s.socketErrors ? ` (${s.socketErrors} socket errors)` : ""}`} |`,
    );
  }
  return lines.join("\n");
}

/** Median CPU µs per response of a series (server, its main thread, generator), or null without /proc. */
export function cpuPerResponse(s: Series): { server: number; front: number; generator: number; db: number | null } | null {
  const runs = s.runs.filter((r) => r.cpu !== undefined && r.requests > 0);
  if (runs.length === 0) return null;
  const withDb = runs.filter((r) => r.cpu!.dbUs !== undefined);
  return {
    server: median(runs.map((r) => r.cpu!.serverUs / r.requests)),
    front: median(runs.map((r) => r.cpu!.frontUs / r.requests)),
    generator: median(runs.map((r) => r.cpu!.generatorUs / r.requests)),
    db: withDb.length > 0 ? median(withDb.map((r) => r.cpu!.dbUs! / r.requests)) : null,
  };
}

/**
 * CPU per response and the ceilings it implies, as ratios to the baseline's req/s under the same
 * generator: `cores` x 1e6 / (service + generator µs), and 1e6 / (main thread µs). Empty when no
 * run has CPU figures (no /proc).
 */
export function cpuTable(rows: Row[], cores: number): string {
  // On PostgreSQL (--store postgres) the database shares the cores too: a column of its own, counted in the ceiling.
  const db = rows.some((r) => cpuPerResponse(r.series)?.db != null);
  const lines = [
    `| scenario | generator | service µs | of which main thread | generator µs |${db ? " PostgreSQL µs |" : ""} ceiling, all cores busy | ceiling, main thread busy | target | service µs target |`,
    `|---|---|--:|--:|--:|${db ? "--:|" : ""}--:|--:|--:|--:|`,
  ];
  let measured = 0;
  for (const r of rows) {
    const c = cpuPerResponse(r.series);
    if (!c) continue;
    measured++;
    const base = r.ratio ? r.rps / r.ratio : null; // the baseline's req/s, same generator
    const ceiling = (rps: number): string => (base === null || !Number.isFinite(rps) ? "–" : (rps / base).toFixed(2));
    lines.push(
      `| ${r.series.scenario} | ${r.series.generator} | ${c.server.toFixed(1)} | ${c.front.toFixed(1)} | ${c.generator.toFixed(1)} | ` +
        (db ? `${c.db === null ? "–" : c.db.toFixed(1)} | ` : "") +
        `${ceiling((cores * 1e6) / (c.server + c.generator + (c.db ?? 0)))} | ${ceiling(1e6 / c.front)} | ${r.series.target === undefined ? "–" : `≥ ${r.series.target}`} | ${r.series.cpuTarget === undefined ? "–" : `≤ ${r.series.cpuTarget}`} |`,
    );
  }
  return measured > 0 ? lines.join("\n") : "";
}

/**
 * Variants side by side (variants.ts): one line per scenario and generator, a cell per variant
 * (ratio to hello world; service and main-thread µs per response where /proc gave them), then each
 * variant against the one before it as factors: req/s, and service CPU per response.
 */
export function variantTable(rows: Row[], variants: string[]): string {
  const byName = new Map(rows.map((r) => [`${r.series.scenario}|${r.series.generator}`, r]));
  const pairs = variants.slice(1).map((v, i) => [variants[i]!, v] as const);
  const lines = [
    `| scenario | generator | ${variants.map((v) => `@${v}`).join(" | ")} | ${pairs.map(([a, b]) => `@${b} / @${a} req/s | @${b} / @${a} service µs`).join(" | ")} |`,
    `|---|---|${variants.map(() => "--:|").join("")}${pairs.map(() => "--:|--:|").join("")}`,
  ];
  const seen = new Set<string>();
  for (const r of rows) {
    const { scenario, variant } = splitVariantName(r.series.scenario);
    const key = `${scenario}|${r.series.generator}`;
    if (variant === undefined || seen.has(key)) continue;
    seen.add(key);
    const rowOf = (v: string): Row | undefined => byName.get(`${scenario}@${v}|${r.series.generator}`);
    const cell = (x: Row | undefined): string => {
      if (!x) return "–";
      const c = cpuPerResponse(x.series);
      return `${x.ratio === null ? "–" : x.ratio.toFixed(2)}${c ? ` (${c.server.toFixed(1)} µs, main ${c.front.toFixed(1)})` : ""}`;
    };
    const factors = pairs.map(([va, vb]) => {
      const a = rowOf(va);
      const b = rowOf(vb);
      const ca = a && cpuPerResponse(a.series);
      const cb = b && cpuPerResponse(b.series);
      return `${a && b ? (b.rps / a.rps).toFixed(2) : "–"} | ${ca && cb ? (cb.server / ca.server).toFixed(2) : "–"}`;
    });
    lines.push(`| ${scenario} | ${r.series.generator} | ${variants.map((v) => cell(rowOf(v))).join(" | ")} | ${factors.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** Splits a row name `check@base` into scenario and variant (bench/http/variants.ts names them). */
export function splitVariantName(name: string): { scenario: string; variant: string | undefined } {
  const at = name.indexOf("@");
  return at < 0 ? { scenario: name, variant: undefined } : { scenario: name.slice(0, at), variant: name.slice(at + 1) };
}
