import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { hitBody } from "../../src/http/schemas/beacon.js";
import { checkBody } from "../../src/http/schemas/check.js";
import { fastPathOf, validate } from "../../src/http/validate.js";

/**
 * The hand-written fast paths of POST /v1/collect's hit and POST /v1/check's body (validate.ts,
 * withFastPath; the two kept in issue 27, bench/README.md) against their zod schemas: on valid
 * bodies they must be taken and return what zod returns (same values, same key order); on
 * thousands of mutated bodies, and on every odd value in every field, validate must answer
 * exactly as zod alone (value or message).
 */

/** validate as it is without a fast path: zod's value, or the message of its VALIDATION_ERROR. */
function viaZod(schema: ZodType, value: unknown): { ok: true; json: string } | { ok: false; message: string } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, json: canonical(parsed.data) };
  const issue = parsed.error.issues[0]!;
  const path = ["body", ...issue.path.map(String)].join(".");
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more: see error.problems)` : "";
  return { ok: false, message: `${path}: ${issue.message}${more}` };
}

function viaValidate(schema: ZodType, value: unknown): { ok: true; json: string } | { ok: false; message: string } {
  try {
    return { ok: true, json: canonical(validate(schema, value, "body")) };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** JSON with key order kept, plus which keys hold undefined and where -0 is (JSON hides both). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x === undefined ? "<undefined>" : Object.is(x, -0) ? "<-0>" : x));
}

const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
/** POST /v1/collect hits: the bench's and every optional part. */
const HITS: unknown[] = [
  {
    kind: "page.view",
    action: "pageview",
    token: "v1.prj_8Hq2LmT7aZ3kXw9B.s_4mQx9TbV2kLr8ZpW3nYc0A.mhz3k2p0.Zk3pQ9xL2mT7aW4b",
    session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
    page: "/products/1",
    signals: { tells: ["webdriver", "cdp_runtime"], fp: "00000001000abc", timing: { elapsed_ms: 801.5, interactions: 1, rtt_ms: 12 }, ua: CHROME },
  },
  { signals: { ua: "x", timing: { rtt_ms: 0 }, tells: [] }, page: "/", action: "signup", kind: "form.submit", extra: { a: 1 } },
  {},
  { signals: {} },
  { signals: { timing: {} } },
];
/** POST /v1/check bodies: the bench's (bench/http/scenarios/check.ts) and every kind of field value. */
const MESSAGE = "Hello, I bought the walnut desk from your shop two weeks ago and one of the legs arrived with a crack along the grain.";
const CHECKS: unknown[] = [
  {
    form_id: "contact",
    form_data: { name: "Visitor", message: MESSAGE },
    metadata: { email: "jonas.berg@example-shop.com", ip: "73.15.20.30", user_agent: CHROME, form_loaded_at: 1_763_677_140_000, honeypot_field: "" },
  },
  {
    metadata: { captcha_token: "v1.abc", zz: 1, form_loaded_at: 1_763_677_140, ip: " 2a02:8108:1140:1::1 " },
    form_data: { "2": 3, tags: ["a", 1, true, -0], agree: true, phone: null, age: 41.5, "": "", _fs_signals: '{"token":"t","signals":{"tells":["webdriver"]}}' },
    form_id: " x ",
  },
  { form_id: "f", form_data: {} },
  { form_id: "f", metadata: {} },
  { form_id: "f", metadata: { email: "", form_loaded_at: 0 }, form_data: { list: [] } },
];
/** Values a field may be replaced with: wrong types, edges of every bound, unsafe text. */
const ODD: unknown[] = [
  undefined, null, true, 0, -0, -1, 1.5, 1e9, 1e9 + 1, 1e10, 1e10 + 1, 600_000, 600_001, 2 ** 53, Number.MAX_VALUE, "", " ", "  x  ", "a",
  "page.view", "form.submit", "auth.login", "auth.signup", "ok_tell", "BAD", "0123456789abcdef", "0123456", "x".repeat(40), "x".repeat(41),
  "x".repeat(64), "x".repeat(65), "x".repeat(128), "x".repeat(129), " " + "x".repeat(128) + " ", "x".repeat(200), "x".repeat(201), "x".repeat(256), "x".repeat(257),
  "x".repeat(320), "x".repeat(321), "x".repeat(512), "x".repeat(513), "x".repeat(1024), "x".repeat(1025), "x".repeat(2048), "x".repeat(2049),
  "a\u0000b", "a\nb", "a\tb", "\u202eevil", "\ud800", "ok \ud83d\ude00", "\u00a0nbsp\u00a0", "\ufeffbom", [], ["ok"], ["ok", "BAD"], Array(33).fill("t"), Array(32).fill("t"),
  {}, { a: 1 }, { elapsed_ms: 5 }, { interactions: 1.5 }, { tells: ["a"], fp: "deadbeef" },
  // check and meter bounds: text lengths, field values and lists, windows, units, timestamps.
  "x".repeat(5_000), "x".repeat(5_001), "x".repeat(10_000), "x".repeat(10_001), "x".repeat(20_000), "x".repeat(20_001), " ".repeat(3),
  1e14, 1e14 + 1e3, 1e11, 10_000, 10_001, 2, Array(100).fill(1), Array(101).fill(1), [null], [[]], [{}], ["x".repeat(5_001)], [1.5, true, "x"],
  "1s", "0s", "15m", "1h", "1d", "31d", "32d", "9999999s", "10000000s", "1w", "01s",
  { user_id: "u" }, { ip: "1.2.3.4" }, { session: " " }, { user_id: undefined }, { max: 10, window: "1m" }, { max: 1.5, window: "1m" }, { max: 10, window: "1m", zz: 1 },
  { name: "n" }, { a: [1, "b"] }, { a: undefined }, { __proto__: null, x: 1 }, JSON.parse('{"__proto__":"x"}'),
  { email: "a@b.c", ip: "1.2.3.4" }, { form_loaded_at: -1 }, { user_agent: undefined },
];

/** A deep copy that keeps a null prototype (structuredClone would drop it). */
function copyOf(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  return Object.getPrototypeOf(v) === null ? Object.assign(Object.create(null), v) : structuredClone(v);
}

/**
 * A copy of `base` with a few fields (top level or nested one level) replaced, removed or added:
 * with values from ODD, or half the time from `likely[field]` when given (values the field takes,
 * so that strict bodies still reach the fast path after a mutation or two).
 */
function mutate(base: unknown, keys: string[], nested: Record<string, string[]>, r: () => number, likely?: Record<string, unknown[]>): unknown {
  const out = structuredClone(base) as Record<string, unknown>;
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
    // A copy: a shared ODD object mutated later would leak into other bodies (or hold itself).
    let value = copyOf(pick(ODD));
    const key = r() < 0.1 ? pick(["zz", "__proto__", "constructor"]) : pick(keys);
    const parentKey = Object.keys(nested).find(() => r() < 0.4);
    let target: Record<string, unknown> = out;
    let k = key;
    if (parentKey && typeof out[parentKey] === "object" && out[parentKey] !== null && !Array.isArray(out[parentKey])) {
      target = out[parentKey] as Record<string, unknown>;
      k = pick(nested[parentKey]!);
      const deeper = target[k];
      if (k === "timing" && typeof deeper === "object" && deeper !== null && r() < 0.6) {
        target = deeper as Record<string, unknown>;
        k = pick(["elapsed_ms", "interactions", "rtt_ms", "zz"]);
      } else if (Array.isArray(deeper) && deeper.length > 0 && r() < 0.5) {
        target = deeper as unknown as Record<string, unknown>;
        k = String(Math.floor(r() * (deeper.length + 1)));
      }
    }
    const good = likely?.[k];
    if (good !== undefined && r() < 0.5) value = structuredClone(pick(good));
    if (value === undefined && r() < 0.5) delete target[k];
    else Object.defineProperty(target, k, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

describe("fast paths of hot bodies", () => {
  it("are registered and taken for valid bodies, returning what zod returns", () => {
    for (const [schema, bodies] of [[hitBody, HITS], [checkBody, CHECKS]] as const) {
      const fast = fastPathOf(schema)!;
      expect(fast).toBeTypeOf("function");
      for (const b of bodies) {
        const out = fast(b);
        expect(out).toBeDefined();
        expect(canonical(out)).toBe(viaZod(schema, b).ok ? (viaZod(schema, b) as { json: string }).json : "zod refused");
        expect(out).not.toBe(b); // a new object, as zod's
      }
    }
  });

  it("answer exactly as zod does for mutated bodies (values and error messages)", () => {
    const cases: Array<[ZodType, unknown[], string[], Record<string, string[]>, Record<string, unknown[]>?]> = [
      [hitBody, HITS, ["kind", "action", "token", "session_id", "page", "signals"], { signals: ["tells", "fp", "timing", "ua", "zz"] }],
      [
        checkBody,
        CHECKS,
        ["form_id", "form_data", "metadata"],
        { form_data: ["name", "message", "tags", "_fs_signals", "zz", "__proto__"], metadata: ["email", "ip", "user_agent", "honeypot_field", "form_loaded_at", "captcha_token", "zz"] },
        {
          form_id: ["contact"],
          name: ["Jane", 3, true, null, ["a", 2, false]],
          message: [MESSAGE, ""],
          tags: [[], ["x", -1]],
          email: ["a@b.c", undefined],
          form_loaded_at: [1_763_677_140_000, 0, undefined],
          captcha_token: ["tok", undefined],
        },
      ],
    ];
    // Uniform draws in [0, 1) for mutate's choices (unbiased: fast-check's small values would skew them).
    const unit = fc.noBias(fc.integer({ min: 0, max: 0xffffffff })).map((n) => n / 2 ** 32);
    for (const [schema, bases, keys, nested, likely] of cases) {
      const fast = fastPathOf(schema)!;
      let fastTaken = 0;
      let total = 0;
      fc.assert(
        fc.property(fc.nat(bases.length - 1), fc.gen(), (i, g) => {
          const body = mutate(bases[i], keys, nested, () => g(() => unit), likely);
          expect(viaValidate(schema, body), canonical(body)).toEqual(viaZod(schema, body));
          total++;
          if (fast(body) !== undefined) fastTaken++;
        }),
        { seed: 19, numRuns: 6000 },
      );
      for (const odd of ODD) expect(viaValidate(schema, odd)).toEqual(viaZod(schema, odd));
      // Every odd value in every field of the first body, one at a time: each bound is met at least once.
      const fields: Array<[string | null, string]> = [...keys.map((k): [null, string] => [null, k]), ...Object.entries(nested).flatMap(([p, ks]) => ks.map((k): [string, string] => [p, k]))];
      for (const [parent, k] of fields) {
        for (const odd of ODD) {
          const body = structuredClone(bases[0]) as Record<string, Record<string, unknown>>;
          const target: Record<string, unknown> = parent === null ? body : body[parent]!;
          Object.defineProperty(target, k, { value: copyOf(odd), enumerable: true, writable: true, configurable: true });
          expect(viaValidate(schema, body), `${parent ?? "body"}.${k}`).toEqual(viaZod(schema, body));
        }
      }
      expect(fastTaken).toBeGreaterThan(total / 10); // the comparison covered the fast path, not only the fallback
    }
  });
});
