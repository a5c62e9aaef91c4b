/**
 * Prints what the e-mail guard does to the installed lists (datasets/email-lists.ts): per-source
 * counts, the counts before and after the guard, and every removal. `--fixture` prints the JSON
 * that test/fixtures/email-guard-removals.json pins (redirect it there after reviewing a change).
 *
 *   npm run build --silent && node dist/scripts/email-guard-report.js
 *   node dist/scripts/email-guard-report.js --fixture > test/fixtures/email-guard-removals.json
 */
import { auditEmailLists, readNeverDisposable, readPackageEmailLists } from "../src/datasets/email-lists.js";
import { DISPOSABLE_SOURCES, FREE_SOURCE, readDomainList } from "../src/datasets/email-sources.js";

const src = readPackageEmailLists();
const audit = auditEmailLists(src);

if (process.argv.includes("--fixture")) {
  const fixture = {
    removed: audit.removed.map((r) => `${r.domain} ${r.rule} ${r.by}`),
    freeDropped: audit.freeDropped.map((f) => `${f.domain} under ${f.under}`),
  };
  process.stdout.write(`${JSON.stringify(fixture, null, 1)}\n`);
} else {
  const category = new Map(readNeverDisposable().domains.map((d) => [d.domain, d.category] as const));
  for (const spec of [...DISPOSABLE_SOURCES, FREE_SOURCE]) {
    const l = readDomainList(spec);
    console.log(`${spec.id} ${spec.version} (${spec.licence}) ${spec.file}: ${l.entries} entries, ${new Set(l.domains).size} distinct domains, ${l.converted} converted from Unicode, ${l.malformed.length} malformed ${JSON.stringify(l.malformed)}`);
  }
  console.log(`disposable: ${audit.listed} listed, ${audit.kept} after the guard, ${audit.removed.length} removed`);
  const groups = new Map<string, string[]>();
  for (const r of audit.removed) {
    const key = r.rule === "never_disposable" ? `never_disposable/${category.get(r.by)}` : r.rule;
    groups.set(key, [...(groups.get(key) ?? []), r.by === r.domain ? r.domain : `${r.domain} (${r.by})`]);
  }
  for (const [k, v] of [...groups].sort()) console.log(`  ${k}: ${v.length}: ${v.join(", ")}`);
  console.log(`free hosts under a listed disposable domain (disposable, not free): ${audit.freeDropped.length}: ${audit.freeDropped.map((f) => `${f.domain} (${f.under})`).join(", ")}`);
}
