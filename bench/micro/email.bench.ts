/**
 * E-mail scoring without DNS: `analyzeEmail(address)` (syntax, normalisation, list lookups, role,
 * typo check), lists already loaded. Target: a few µs per address.
 *
 *   node dist/bench/micro/email.bench.js
 *
 * Mix, deterministic: common free-provider addresses, company addresses, plus-tags, role accounts,
 * typos, disposable domains (also via a subdomain), an IDN address and invalid ones, in turn.
 * The typo check runs in full for every domain the free list does not know, so "company" and
 * "typo" addresses are the expensive ones; both are shown alone as well.
 */
import { Bench } from "tinybench";
import { emailLists } from "../../src/datasets/email-lists.js";
import { analyzeEmail, parseEmail } from "../../src/scoring/email.js";
import { machineLine, microRow } from "../lib/context.js";

const TIME_MS = 1000;
const WARMUP_MS = 250;

const MIX = [
  "jane.doe@gmail.com",
  "J.Ane+shop@GoogleMail.com",
  "bob@yahoo.com",
  "alice@outlook.com",
  "ceo@acme-industries.com",
  "sales@acme-industries.com",
  "first.last@sub.example.co.uk",
  "jane@gmsil.com",
  "john@hotmsil.com",
  "x@mailinator.com",
  "x@inbox.mailinator.com",
  "jörg@bücher.de",
  "not an address",
  "a..b@example.com",
];


async function main(): Promise<void> {
  const t0 = performance.now();
  const lists = emailLists();
  const loadMs = performance.now() - t0;
  console.log(`# email: analyzeEmail without DNS\n${machineLine()}; lists loaded in ${loadMs.toFixed(0)} ms (${lists.counts.disposable} disposable, ${lists.counts.free} free, ${lists.counts.role} role); warm-up ${WARMUP_MS} ms, ${TIME_MS} ms per task`);
  let i = 0;
  let sink = 0;
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  bench
    .add("analyzeEmail, mixed", () => {
      sink += analyzeEmail(MIX[i++ % MIX.length]!).score;
    })
    .add("analyzeEmail, free provider (gmail.com)", () => {
      sink += analyzeEmail("jane.doe@gmail.com").score;
    })
    .add("analyzeEmail, company domain (typo check memoised per domain)", () => {
      sink += analyzeEmail("ceo@acme-industries.com").score;
    })
    .add("analyzeEmail, typo (gmsil.com)", () => {
      sink += analyzeEmail("jane@gmsil.com").score;
    })
    .add("parseEmail only", () => {
      sink += parseEmail(MIX[i++ % MIX.length]!).ok ? 1 : 0;
    });
  await bench.run();
  console.table(bench.tasks.map(microRow));
  if (sink === 0) console.log("(unreachable)");
}

await main();
