import { describe, expect, it } from "vitest";
import { parseEmail } from "../../src/scoring/email.js";

const ok = (a: string) => {
  const r = parseEmail(a);
  if (!r.ok) throw new Error(`${a}: ${r.error}`);
  return r.value;
};
const err = (a: string) => {
  const r = parseEmail(a);
  return r.ok ? null : r.error;
};

describe("parseEmail: syntax", () => {
  it("accepts ordinary addresses, trimming surrounding space", () => {
    expect(ok("jane.doe@example.com")).toMatchObject({ local: "jane.doe", domain: "example.com" });
    expect(ok("  Jane@Example.COM \n")).toMatchObject({ local: "Jane", domain: "example.com" });
    expect(ok("o'brien!#$%&*/=?^_`{|}~-@sub.example.co.uk").domain).toBe("sub.example.co.uk");
  });
  it("refuses what is not one address", () => {
    expect(err("")).toBe("empty");
    expect(err("   ")).toBe("empty");
    expect(err("jane.example.com")).toBe("missing_at");
    expect(err("a@b@example.com")).toBe("multiple_at");
    expect(err("@example.com")).toBe("local_empty");
    expect(err("jane@")).toBe("domain_empty");
  });
  it("refuses dots at the ends of the local part and doubled dots", () => {
    expect(err(".jane@example.com")).toBe("local_invalid");
    expect(err("jane.@example.com")).toBe("local_invalid");
    expect(err("ja..ne@example.com")).toBe("local_invalid");
  });
  it("refuses quoted local parts, spaces, comments and domain literals (the practical subset)", () => {
    expect(err('"jane doe"@example.com')).toBe("local_invalid");
    expect(err("jane doe@example.com")).toBe("local_invalid");
    expect(err("jane(comment)@example.com")).toBe("local_invalid");
    expect(err("jane@[192.0.2.1]")).toBe("domain_literal");
  });
  it("limits the local part to 64 octets, the domain to 253 and the address to 254", () => {
    expect(ok(`${"a".repeat(64)}@example.com`).local).toHaveLength(64);
    expect(err(`${"a".repeat(65)}@example.com`)).toBe("local_too_long");
    // 64 two-octet letters: 32 characters would fit, 33 do not.
    expect(err(`${"ä".repeat(33)}@example.com`)).toBe("local_too_long");
    const label = "a".repeat(63);
    const domain253 = `${label}.${label}.${label}.${"b".repeat(57)}.com`;
    expect(domain253).toHaveLength(253);
    expect(err(`a@${domain253}`)).toBe("too_long"); // 255 octets in all
    expect(err(`${"a".repeat(10)}@${label}.${label}.${label}.${label}.com`)).toBe("too_long");
    expect(err(`a@${label}.${label}.${label}.${"b".repeat(62)}.com`)).toBe("too_long");
  });
  it("checks every domain label", () => {
    expect(err("a@example..com")).toBe("domain_invalid");
    expect(err("a@-example.com")).toBe("domain_invalid");
    expect(err("a@example-.com")).toBe("domain_invalid");
    expect(err("a@exa_mple.com")).toBe("domain_invalid");
    expect(err(`a@${"a".repeat(64)}.com`)).toBe("domain_invalid");
    expect(err("a@example.com.")).toBe("domain_invalid");
    expect(ok("a@my-host.example.com").domain).toBe("my-host.example.com");
  });
  it("needs two labels and a real top-level label", () => {
    expect(err("a@localhost")).toBe("domain_single_label");
    expect(err("a@192.0.2.1")).toBe("tld_invalid");
    expect(err("a@example.c")).toBe("tld_invalid");
    expect(err("a@example.c0m")).toBe("tld_invalid");
    expect(ok("a@example.xn--p1ai").domain).toBe("example.xn--p1ai");
  });
});

describe("parseEmail: IDN", () => {
  it("converts a Unicode domain to its A-label (punycode) form", () => {
    expect(ok("jane@bücher.de").domain).toBe("xn--bcher-kva.de");
    expect(ok("jane@пример.рф").domain).toBe("xn--e1afmkfd.xn--p1ai");
    // UTS #46 maps case and full-width dots.
    expect(ok("jane@BÜCHER。de").domain).toBe("xn--bcher-kva.de");
  });
  it("accepts an A-label domain as it is", () => {
    expect(ok("jane@xn--bcher-kva.de").domain).toBe("xn--bcher-kva.de");
  });
  it("accepts UTF-8 local parts (RFC 6531) but not spaces or controls in them", () => {
    expect(ok("jörg@example.de").normalizedLocal).toBe("jörg");
    expect(ok("用户@例子.广告").domain).toBe("xn--fsqu00a.xn--4rr70v");
    expect(err("jö rg@example.de")).toBe("local_invalid");
    expect(err("jörg\u0000@example.de")).toBe("local_invalid");
  });
  it("refuses a domain UTS #46 cannot convert", () => {
    expect(err("jane@exa\u{1F4A9}mple\u200D.com")).toBe("domain_invalid");
  });
});

describe("parseEmail: normalisation", () => {
  it("lower-cases and drops a +tag for every domain", () => {
    expect(ok("Jane.Doe+Shop@Example.com")).toMatchObject({ normalizedLocal: "jane.doe", normalizedDomain: "example.com", plusAddress: true });
  });
  it("removes dots only where the provider ignores them, and folds googlemail.com into gmail.com", () => {
    expect(ok("J.a.n.e@gmail.com")).toMatchObject({ normalizedLocal: "jane", normalizedDomain: "gmail.com", plusAddress: false });
    expect(ok("j.ane+x@googlemail.com")).toMatchObject({ normalizedLocal: "jane", normalizedDomain: "gmail.com", plusAddress: true });
    expect(ok("j.ane@outlook.com").normalizedLocal).toBe("j.ane");
  });
  it("keeps a leading + (no base to tag)", () => {
    expect(ok("+jane@example.com")).toMatchObject({ normalizedLocal: "+jane", plusAddress: false });
  });
});
