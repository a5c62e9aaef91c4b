import { describe, expect, it } from "vitest";
import { firstNonPublic, hostOf, isPublicAddress } from "../../src/shared/public-address.js";
import { parseIp } from "../../src/shared/ip.js";
import { publicOnlyLookup } from "../../src/store/writer/webhook-send.js";

const isPublic = (s: string): boolean => isPublicAddress(parseIp(s)!);

describe("public addresses (src/shared/public-address.ts)", () => {
  it("refuses every kind of non-public address and accepts public ones", () => {
    const refused = [
      "127.0.0.1",
      "127.255.255.254",
      "0.0.0.0",
      "10.0.0.5",
      "172.16.3.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "239.255.255.250",
      "255.255.255.255",
      "240.0.0.1",
      "192.0.2.1",
      "198.18.0.1",
      "::",
      "::1",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "ff02::1",
      "2001:db8::1",
      "fec0::1",
      // IPv4 carried by IPv6: mapped, compatible, NAT64, 6to4.
      "::ffff:127.0.0.1",
      "::ffff:a9fe:a9fe",
      "::7f00:1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b::10.0.0.1",
      "2002:7f00:1::1",
      "2002:c0a8:101::",
    ];
    for (const a of refused) expect({ a, public: isPublic(a) }).toEqual({ a, public: false });
    const accepted = [
      "8.8.8.8",
      "93.184.215.14",
      "1.1.1.1",
      "2606:4700:4700::1111",
      "2a00:1450:4001::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ];
    for (const a of accepted) expect({ a, public: isPublic(a) }).toEqual({ a, public: true });
  });

  it("names the first non-public address of a DNS answer (a mapped one as IPv4), and counts text that is no address as not public", () => {
    expect(firstNonPublic(["93.184.215.14", "2606:4700:4700::1111"])).toBeNull();
    expect(firstNonPublic(["93.184.215.14", "10.0.0.5", "127.0.0.1"])).toBe("10.0.0.5");
    expect(firstNonPublic(["::ffff:7f00:1"])).toBe("127.0.0.1");
    expect(firstNonPublic(["fd00::5"])).toBe("fd00::5");
    expect(firstNonPublic(["not-an-address"])).toBe("not-an-address");
  });

  it("judges a URL's host as the URL parser reads it: odd IPv4 spellings, IPv6 brackets, localhost names", () => {
    expect(hostOf("http://2130706433/hook")).toEqual({ refused: "127.0.0.1" });
    expect(hostOf("http://0x7f.1/hook")).toEqual({ refused: "127.0.0.1" });
    expect(hostOf("http://017700000001/")).toEqual({ refused: "127.0.0.1" });
    expect(hostOf("https://[::ffff:127.0.0.1]/")).toEqual({ refused: "127.0.0.1" });
    expect(hostOf("https://[fd00::1]:8443/")).toEqual({ refused: "fd00::1" });
    expect(hostOf("https://169.254.169.254./latest/meta-data")).toEqual({ refused: "169.254.169.254" });
    expect(hostOf("https://LOCALHOST./")).toEqual({ refused: "localhost." });
    expect(hostOf("https://api.localhost/")).toEqual({ refused: "api.localhost" });
    expect(hostOf("https://93.184.215.14/hook")).toEqual({ literal: "93.184.215.14" });
    expect(hostOf("https://[2606:4700:4700::1111]/")).toEqual({ literal: "2606:4700:4700::1111" });
    expect(hostOf("https://hooks.example.com/x")).toEqual({ name: "hooks.example.com" });
    expect(hostOf("https://localhost.example.com/x")).toEqual({ name: "localhost.example.com" });
  });
});

describe("publicOnlyLookup (src/store/writer/webhook-send.ts)", () => {
  it("fails a name that resolves to a non-public address, naming the address, and hands over what it resolved otherwise", async () => {
    const look = (host: string, all: boolean) =>
      new Promise<{ err: Error | null; address: unknown }>((resolve) => publicOnlyLookup(host, { all }, (err, address) => resolve({ err, address })));
    // localhost resolves from the hosts file, without the network.
    const local = await look("localhost", true);
    expect(local.err?.message).toMatch(/^address (127\.0\.0\.1|::1) is not public/);
    expect((await look("localhost", false)).err?.message).toMatch(/is not public/);
    // An IP literal resolves to itself.
    expect(await look("8.8.8.8", true)).toEqual({ err: null, address: [{ address: "8.8.8.8", family: 4 }] });
    expect(await look("8.8.8.8", false)).toEqual({ err: null, address: "8.8.8.8" });
  });
});
