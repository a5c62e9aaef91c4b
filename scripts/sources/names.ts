/**
 * Turning free-text row comments into names: the organisation behind a scanner host name
 * (maltrail's "IP # census1.shodan.io") and the provider named in a VPN ASN comment (X4BNet's
 * "AS9009 # M247, GB (NordVPN)"). Pure; unit-tested in test/unit/sources-parsers.test.ts.
 */
import { parseIp } from "../../src/shared/ip.js";

// Second-level labels under which registrations sit one level deeper (example.co.uk).
const SECOND_LEVEL = new Set(["co", "com", "net", "org", "ac", "edu", "gov", "or", "ne", "go"]);

/**
 * The organisation of a scanner from a host name or owner comment: the registered domain's
 * first label, lower case ("scanners.labs.rapid7.com" -> "rapid7", "umich.edu" -> "umich");
 * a bare word is kept ("ANSSI" -> "anssi").
 * @returns null when the comment is empty or just an address.
 */
export function scannerOrgFromComment(comment: string | null): string | null {
  if (!comment) return null;
  const text = comment.trim().toLowerCase().replace(/\.+$/, "");
  if (text === "" || parseIp(text) !== null) return null;
  if (/\s/.test(text)) return text; // an owner's name rather than a host name
  const labels = text.split(".").filter((l) => l !== "");
  if (labels.length === 0) return null;
  if (labels.length === 1) return labels[0]!;
  const tld = labels[labels.length - 1]!;
  const second = labels[labels.length - 2]!;
  if (tld.length === 2 && SECOND_LEVEL.has(second) && labels.length >= 3) return labels[labels.length - 3]!;
  return second;
}

/**
 * The VPN provider named in a list comment: a parenthesised name that mentions VPN wins
 * ("M247, GB (NordVPN)" -> "NordVPN"); otherwise the text before the first "(", " - " or ","
 * ("Surfshark" -> "Surfshark", "VPNtranet, LLC." -> "VPNtranet").
 * @returns null when the comment is empty or only a link.
 */
export function vpnProviderFromComment(comment: string | null): string | null {
  if (!comment) return null;
  for (const m of comment.matchAll(/\(([^)]*)\)/g)) {
    const inner = m[1]!.trim();
    if (/vpn/i.test(inner) && !/^https?:/i.test(inner)) return inner;
  }
  const head = comment.split(/\(| - |,/)[0]!.trim().replace(/[?!.]+$/, "").trim();
  if (head === "" || /^https?:/i.test(head)) return null;
  return head;
}
