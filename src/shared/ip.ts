/**
 * Strict IP address parsing and formatting.
 *
 * Runs once per request on the front thread, so it is a hand-written scanner over char codes:
 * no regexes, no `split`, and one small allocation for the result (plus a Uint32Array for IPv6).
 */

/**
 * A parsed address.
 * - `version: 4`: `v4` is the address as an unsigned 32-bit integer (1.2.3.4 -> 0x01020304).
 *   `mapped` is true when the text was an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`), which we
 *   treat as the IPv4 address it carries, as dual-stack sockets report IPv4 peers that way.
 * - `version: 6`: `words` holds the 128 bits as four big-endian 32-bit words, most significant first.
 */
export type ParsedIp =
  | { version: 4; v4: number; mapped: boolean }
  | { version: 6; words: Uint32Array };

/** Longest valid text form: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255` is 45 characters. */
export const MAX_IP_TEXT_LENGTH = 45;

const COLON = 58;
const DOT = 46;
const ZERO = 48;
const NINE = 57;

// Scratch space for the eight 16-bit groups; safe to share because parsing is synchronous.
const groups = new Uint16Array(8);

/**
 * Parses an IPv4 dotted quad or an IPv6 address (RFC 4291 text forms), strictly.
 *
 * Accepted: `1.2.3.4`; `2001:db8::1`, `::`, `::1`, `1::`, upper or lower case hex, a dotted IPv4
 * tail (`64:ff9b::1.2.3.4`). IPv4-mapped addresses (`::ffff:1.2.3.4`, `::ffff:102:304`) come back
 * as `{ version: 4, mapped: true }`.
 * Rejected: leading zeros in IPv4 octets (`01.2.3.4`), short/octal/hex IPv4 forms, zone ids
 * (`fe80::1%eth0`), brackets, whitespace, more than one `::`, and anything over 45 characters.
 *
 * @returns the parsed address, or null when `s` is not exactly one address.
 * @example parseIp("::ffff:8.8.8.8") // { version: 4, v4: 0x08080808, mapped: true }
 */
export function parseIp(s: string): ParsedIp | null {
  const n = s.length;
  if (n === 0 || n > MAX_IP_TEXT_LENGTH) return null;
  // An address with no colon can only be IPv4; with one it can only be IPv6.
  if (s.indexOf(":") === -1) {
    const v4 = parseIpv4Range(s, 0, n);
    return v4 < 0 ? null : { version: 4, v4, mapped: false };
  }
  return parseIpv6(s, n);
}

/**
 * Parses `s[from, to)` as a strict dotted quad.
 * @returns the address as uint32, or -1 when invalid.
 */
function parseIpv4Range(s: string, from: number, to: number): number {
  let value = 0;
  let octets = 0;
  let i = from;
  while (octets < 4) {
    const start = i;
    let octet = 0;
    while (i < to) {
      const c = s.charCodeAt(i);
      if (c < ZERO || c > NINE) break;
      octet = octet * 10 + (c - ZERO);
      i++;
      if (i - start > 3) return -1;
    }
    const digits = i - start;
    // "0" is fine; "00" or "01" are not (some parsers read a leading zero as octal).
    if (digits === 0 || octet > 255 || (digits > 1 && s.charCodeAt(start) === ZERO)) return -1;
    value = value * 256 + octet;
    octets++;
    if (octets < 4) {
      if (i >= to || s.charCodeAt(i) !== DOT) return -1;
      i++;
    }
  }
  return i === to ? value : -1;
}

function hexValue(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20; // ASCII letters: set the lower-case bit
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

function parseIpv6(s: string, n: number): ParsedIp | null {
  let i = 0;
  let count = 0; // groups written so far
  let compressAt = -1; // group index where "::" stands, -1 when absent
  if (s.charCodeAt(0) === COLON) {
    // A leading colon is only valid as the start of "::".
    if (n < 2 || s.charCodeAt(1) !== COLON) return null;
    compressAt = 0;
    i = 2;
  }
  while (i < n) {
    const start = i;
    let group = 0;
    let h = 0;
    while (i < n && (h = hexValue(s.charCodeAt(i))) >= 0) {
      if (i - start === 4) return null; // five hex digits
      group = (group << 4) | h;
      i++;
    }
    if (i < n && s.charCodeAt(i) === DOT) {
      // A dotted IPv4 tail fills the last two groups and must end the string.
      if (count > 6) return null;
      const v4 = parseIpv4Range(s, start, n);
      if (v4 < 0) return null;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      i = n;
      break;
    }
    if (i === start || count === 8) return null; // empty group, or a ninth group
    groups[count++] = group;
    if (i === n) break;
    if (s.charCodeAt(i) !== COLON) return null; // any other character, e.g. %, ], space
    i++;
    if (i < n && s.charCodeAt(i) === COLON) {
      if (compressAt >= 0) return null; // a second "::"
      compressAt = count;
      i++;
    } else if (i === n) {
      return null; // a single trailing colon
    }
  }
  if (compressAt < 0 ? count !== 8 : count > 7) return null;
  if (compressAt >= 0) {
    // Move the groups after "::" to the end and zero the gap.
    const tail = count - compressAt;
    for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k]!;
    groups.fill(0, compressAt, 8 - tail);
  }
  const w0 = ((groups[0]! << 16) | groups[1]!) >>> 0;
  const w1 = ((groups[2]! << 16) | groups[3]!) >>> 0;
  const w2 = ((groups[4]! << 16) | groups[5]!) >>> 0;
  const w3 = ((groups[6]! << 16) | groups[7]!) >>> 0;
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) return { version: 4, v4: w3, mapped: true };
  const words = new Uint32Array(4);
  words[0] = w0;
  words[1] = w1;
  words[2] = w2;
  words[3] = w3;
  return { version: 6, words };
}

/**
 * Formats a uint32 as a dotted quad.
 * @example formatIpv4(0x08080808) // "8.8.8.8"
 */
export function formatIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * Formats four big-endian words as canonical IPv6 text (RFC 5952: lower case, no leading zeros,
 * the longest run of two or more zero groups compressed to "::", the first run on a tie).
 * @example formatIpv6(Uint32Array.of(0x20010db8, 0, 0, 1)) // "2001:db8::1"
 */
export function formatIpv6(words: ArrayLike<number>): string {
  const g: number[] = [];
  for (let k = 0; k < 4; k++) {
    const w = words[k]! >>> 0;
    g.push(w >>> 16, w & 0xffff);
  }
  let bestAt = -1;
  let bestLen = 1; // runs of length 1 are not compressed
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let end = k;
    while (end < 8 && g[end] === 0) end++;
    if (end - k > bestLen) {
      bestAt = k;
      bestLen = end - k;
    }
    k = end;
  }
  const hex = (from: number, to: number) => g.slice(from, to).map((x) => x.toString(16)).join(":");
  if (bestAt < 0) return hex(0, 8);
  return `${hex(0, bestAt)}::${hex(bestAt + bestLen, 8)}`;
}

/**
 * Formats a parsed address; mapped IPv4 addresses are written as plain dotted quads.
 * @example formatIp(parseIp("::FFFF:1.2.3.4")!) // "1.2.3.4"
 */
export function formatIp(ip: ParsedIp): string {
  return ip.version === 4 ? formatIpv4(ip.v4) : formatIpv6(ip.words);
}

/**
 * Converts four big-endian words to a 128-bit bigint (for builders and tests, not the hot path).
 * @example ipv6WordsToBigInt(Uint32Array.of(0, 0, 0, 1)) // 1n
 */
export function ipv6WordsToBigInt(words: ArrayLike<number>): bigint {
  let v = 0n;
  for (let k = 0; k < 4; k++) v = (v << 32n) | BigInt(words[k]! >>> 0);
  return v;
}

/**
 * Converts a 128-bit bigint to four big-endian words.
 * @throws RangeError when `v` is outside [0, 2^128).
 */
export function ipv6WordsFromBigInt(v: bigint): Uint32Array {
  if (v < 0n || v >> 128n !== 0n) throw new RangeError(`not a 128-bit address: ${v}`);
  const words = new Uint32Array(4);
  for (let k = 3; k >= 0; k--) {
    words[k] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
  return words;
}
