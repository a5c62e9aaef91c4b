/**
 * What validating a hot body costs (issue 19): POST /v1/collect's hit, POST /v1/sessions/resolve's,
 * POST /v1/check's and POST /v1/meter's bodies, the bench scenarios' shapes, through validate():
 * the hit's and the check's with their hand-written fast paths (validate.ts withFastPath) against
 * zod's safeParse alone; resolve's and meter's fast paths were retired in issue 27 (bench/README.md).
 *
 *   node dist/bench/micro/validate.bench.js
 */
import { Bench } from "tinybench";
import { hitBody } from "../../src/http/schemas/beacon.js";
import { checkBody } from "../../src/http/schemas/check.js";
import { meterBody, resolveBody } from "../../src/http/schemas/sessions.js";
import { validate } from "../../src/http/validate.js";
import { machineLine, microRow } from "../lib/context.js";

const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const HIT = JSON.parse(
  JSON.stringify({
    kind: "page.view",
    action: "pageview",
    token: "v1.prj_8Hq2LmT7aZ3kXw9B.s_4mQx9TbV2kLr8ZpW3nYc0A.mhz3k2p0.Zk3pQ9xL2mT7aW4b",
    session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
    page: "/products/1",
    signals: { tells: [], fp: "00000001000abc", timing: { elapsed_ms: 801, interactions: 1, rtt_ms: 12 }, ua: CHROME },
  }),
) as unknown;
const RESOLVE = JSON.parse(
  JSON.stringify({ external_user_id: "user-1", observation_type: "auth.login", session_id: "s_bench00000000000000001", fingerprint: "fp1", ip: "73.15.1.2", email: "user-1@example.com" }),
) as unknown;

/** bench/http/scenarios/check.ts's body: a 300-character message, an email, an IP, a UA, timing, an empty honeypot. */
const CHECK = JSON.parse(
  JSON.stringify({
    form_id: "contact",
    form_data: {
      name: "Visitor",
      message:
        "Hello, I bought the walnut desk from your shop two weeks ago and one of the legs arrived with a crack along the grain. I have photos of the box and the damage. Could you send a replacement leg or tell me how to return the desk? My order number is 20931 and I am home most afternoons this week. Thank you, Jonas",
    },
    metadata: { email: "jonas.berg@example-shop.com", ip: "73.15.20.30", user_agent: CHROME, form_loaded_at: 1_763_677_140_000, honeypot_field: "" },
  }),
) as unknown;
/** bench/http/scenarios/sessions.ts's meter body. */
const METER = JSON.parse(JSON.stringify({ resource: "api/1", identity: { user_id: "meter-user-1" }, limit: { max: 10_000, window: "1s" } })) as unknown;

async function main(): Promise<void> {
  if (JSON.stringify(validate(hitBody, HIT, "body")) !== JSON.stringify(hitBody.parse(HIT))) throw new Error("hit: the fast path differs from zod");
  if (JSON.stringify(validate(checkBody, CHECK, "body")) !== JSON.stringify(checkBody.parse(CHECK))) throw new Error("check: the fast path differs from zod");
  const bench = new Bench({ time: 1000, warmupTime: 250 });
  bench
    .add("collect hit: validate (fast path)", () => validate(hitBody, HIT, "body"))
    .add("collect hit: zod safeParse (before)", () => hitBody.safeParse(HIT))
    .add("resolve body: validate (zod)", () => validate(resolveBody, RESOLVE, "body"))
    .add("check body: validate (fast path)", () => validate(checkBody, CHECK, "body"))
    .add("check body: zod safeParse (before)", () => checkBody.safeParse(CHECK))
    .add("meter body: validate (zod)", () => validate(meterBody, METER, "body"));
  await bench.run();
  console.log(machineLine());
  console.table(bench.tasks.map(microRow));
}

void main();
