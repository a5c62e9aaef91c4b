import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "../../src/shared/errors.js";
import { inputsOf } from "../../src/http/inputs.js";
import { defineRoute } from "../../src/http/route.js";
import { adminListQuery } from "../../src/http/schemas/admin.js";
import { ipParam, ipQuery } from "../../src/http/schemas/ip.js";
import { orgIdParam } from "../../src/http/schemas/params.js";
import { fastPathOf } from "../../src/http/validate.js";

const docs = { summary: "", description: "", tag: "meta", response: null, errors: [], example: {} } as const;
const listRoute = defineRoute({
  method: "get",
  pattern: "/v1/orgs/:orgId/things",
  auth: { kind: "none" },
  params: { orgId: orgIdParam },
  query: adminListQuery,
  docs,
  handle: () => ({ data: null }),
});
const ipRoute = defineRoute({
  method: "get",
  pattern: "/v1/ip/:ip",
  auth: { kind: "none" },
  params: { ip: ipParam },
  query: ipQuery,
  docs,
  handle: () => ({ data: null }),
});

/** The ApiError `read` throws. */
function refusal(read: () => unknown): ApiError {
  try {
    read();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("not refused");
}

describe("route inputs (the router's reading of path and query)", () => {
  const list = inputsOf(listRoute);
  const ip = inputsOf(ipRoute);

  it("decodes path segments and hands their schemas' output by name", () => {
    expect(list.params(["org_a%5Fb"])).toEqual({ orgId: "org_a_b" });
    const { ip: addr } = ip.params(["2001%3Adb8%3A%3A1"]) as { ip: { text: string; parsed: unknown } };
    expect(addr.text).toBe("2001:db8::1");
    expect(addr.parsed).toMatchObject({ version: 6 });
  });

  it("refuses a bad segment with path.<name> and its problems", () => {
    const long = refusal(() => list.params(["x".repeat(65)]));
    expect(long).toMatchObject({ code: "VALIDATION_ERROR", param: "path.orgId" });
    expect(long.problems).toEqual([{ param: "path.orgId", message: expect.any(String) }]);
    expect(refusal(() => list.params(["%E0%A4%A"]))).toMatchObject({ param: "path.orgId", message: "path.orgId: malformed percent-encoding" });
    expect(refusal(() => ip.params(["not-an-ip"])).message).toBe("path.ip: 'not-an-ip' is not a valid IPv4 or IPv6 address.");
  });

  it("reads declared query names (defaults, `+` as space), ignores others, refuses one given twice", () => {
    expect(list.query("")).toEqual({ limit: 50 });
    expect(list.query("limit=7&cursor=org_1&other=%ZZ")).toEqual({ limit: 7, cursor: "org_1" });
    for (const limit of ["0", "abc", "10000", "2.5", ""]) expect(refusal(() => list.query(`limit=${limit}`)).param, limit).toBe("query.limit");
    expect(refusal(() => list.query("limit=1&limit=2"))).toMatchObject({ param: "query.limit", message: "query.limit: give it once" });
    expect(refusal(() => list.query("cursor=%ZZ")).param).toBe("query.cursor");
    expect(refusal(() => list.query("cursor=a+b")).message).toBe("query.cursor: not a cursor this listing returned");
  });

  it("gives the same frozen answer for the same query text (the hot route parses each once)", () => {
    const a = ip.query("include=company,region");
    expect(ip.query("include=company,region")).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual({ include: ["company", "region"] });
    expect(ip.query("")).toEqual({ include: [] });
    expect(refusal(() => ip.query("include=weather"))).toMatchObject({ param: "query.include" });
  });

  it("refuses a route whose path parameter has no schema", () => {
    const bare = defineRoute({ method: "get", pattern: "/v1/x/:id", auth: { kind: "none" }, docs, handle: () => ({ data: null }) });
    expect(() => inputsOf(bare)).toThrow(/no schema for path parameter id/);
    const typed = defineRoute({
      method: "get",
      pattern: "/v1/y/:n",
      auth: { kind: "none" },
      params: { n: z.coerce.number().int() },
      docs,
      handle: ({ params }) => ({ data: params.n + 1 }),
    });
    expect(inputsOf(typed).params(["41"])).toEqual({ n: 41 });
  });

  it("{ip}'s fast path answers what its schema does, or leaves the value to it", () => {
    const fast = fastPathOf(ipParam)!;
    const agrees = (v: unknown): void => {
      const parsed = ipParam.safeParse(v);
      const out = fast(v);
      if (out !== undefined) expect(out, String(v)).toEqual(parsed.data);
      else expect(parsed.success, String(v)).toBe(false);
    };
    for (const v of ["8.8.8.8", "::ffff:1.2.3.4", "2001:db8::1", "1.2.3", "", "x".repeat(65), `::${"0".repeat(70)}`, 5, null]) agrees(v);
    fc.assert(fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 80 })), agrees));
  });
});
