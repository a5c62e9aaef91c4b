import { describe, expect, it } from "vitest";
import { classifyAsn, classifyAsnName } from "../../src/datasets/asn-class.js";

describe("classifyAsnName", () => {
  it.each([
    ["Comcast Cable Communications, LLC", "isp"],
    ["Deutsche Telekom AG", "isp"],
    ["Korea Telecom", "isp"],
    ["SK Broadband Co Ltd", "isp"],
    ["Bredband2 AB", "isp"],
    ["AT&T Enterprises, LLC", "isp"],
    ["PJSC Rostelecom", "isp"],
    ["Chinanet", "isp"],
    ["Vodafone GmbH", "isp"],
    ["County Broadband Ltd", "isp"],
    ["T-Mobile USA, Inc.", "mobile"],
    ["Cellco Partnership DBA Verizon Wireless", "mobile"],
    ["China Mobile Communications Corporation", "mobile"],
    ["PT. Telekomunikasi Selular", "mobile"],
    ["Telefonica Moviles", "mobile"],
    ["Reliance Jio Infocomm Limited", "mobile"],
    ["University of California, San Diego", "education"],
    ["China Education and Research Network Center", "education"],
    ["Verein zur Foerderung eines Deutschen Forschungsnetzes e.V.", "education"],
    ["United States Department of Defense (DoD)", "government"],
    ["UK Ministry of Defence", "government"],
    ["Hetzner Online GmbH Hosting", "hosting"],
    ["Example Data Center LLC", "hosting"],
    ["IBM Cloud", "hosting"],
    ["Ford Motor Company", "business"],
    ["Exxon Mobil Corporation", "business"],
    ["Amazon.com, Inc.", "business"],
  ])("%s -> %s", (name, category) => {
    expect(classifyAsnName(name).category).toBe(category);
  });

  it("says how sure it is", () => {
    expect(classifyAsnName("Korea Telecom").confidence).toBe("medium");
    expect(classifyAsnName("Ford Motor Company").confidence).toBe("low");
    expect(classifyAsnName(null)).toEqual({ category: "business", confidence: "low" });
  });
});

describe("classifyAsn", () => {
  it("trusts a hosting or VPN list over the name, with high confidence", () => {
    for (const evidence of [
      { name: "Korea Telecom", hostingListed: true, vpnListed: false },
      { name: "Tefincom S.A.", hostingListed: false, vpnListed: true },
    ]) {
      expect(classifyAsn(evidence)).toEqual({ category: "hosting", confidence: "high", hosting: true, hostingBy: "list", isp: false, mobile: false });
    }
  });

  it("derives the flags from the name class", () => {
    expect(classifyAsn({ name: "T-Mobile USA, Inc.", hostingListed: false, vpnListed: false })).toMatchObject({ isp: true, mobile: true, hosting: false });
    expect(classifyAsn({ name: "Comcast Cable Communications, LLC", hostingListed: false, vpnListed: false })).toMatchObject({ isp: true, mobile: false });
    expect(classifyAsn({ name: "Example Hosting", hostingListed: false, vpnListed: false })).toMatchObject({ hosting: true, hostingBy: "name", isp: false });
    expect(classifyAsn({ name: "Ford Motor Company", hostingListed: false, vpnListed: false })).toMatchObject({ hosting: false, isp: false, mobile: false, hostingBy: null });
  });
});

describe("mobile carrier ASN list", () => {
  it("makes a listed ASN a mobile carrier (and isp) with high confidence, whatever its name", () => {
    expect(classifyAsn({ name: "AT&T Enterprises, LLC", hostingListed: false, vpnListed: false, mobileListed: true })).toEqual({
      category: "mobile", confidence: "high", hosting: false, hostingBy: null, isp: true, mobile: true,
    });
  });
  it("lets a hosting list win over the mobile list", () => {
    expect(classifyAsn({ name: "x", hostingListed: true, vpnListed: false, mobileListed: true }).mobile).toBe(false);
  });
});
