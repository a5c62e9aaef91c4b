import { createSocket, type RemoteInfo } from "node:dgram";
import { parseIp } from "../../../src/shared/ip.js";

/**
 * Records served by the test DNS server. Names are matched case-insensitively, trailing dots ignored.
 * - `ptr`: address text (IPv4 or IPv6, any valid form) -> host name; served as PTR of its
 *   in-addr.arpa / ip6.arpa name.
 * - `a`, `aaaa`: host name -> addresses (AAAA values in any valid IPv6 text form).
 * - `mx`: domain -> mail exchangers, served as MX (type 15); an exchange of "." is a null MX (RFC 7505).
 * - `silent`: host names or addresses (meaning their reverse name) whose queries are counted but
 *   never answered, so clients time out.
 * - `servfail`: host names or addresses whose queries get SERVFAIL (Node: ESERVFAIL).
 * A name present in some table but lacking the asked type gets NOERROR with no answers (NODATA,
 * which Node reports as ENODATA); any other name gets NXDOMAIN (ENOTFOUND).
 */
export interface DnsRecords {
  ptr?: Record<string, string>;
  a?: Record<string, string[]>;
  aaaa?: Record<string, string[]>;
  mx?: Record<string, Array<{ exchange: string; priority: number }>>;
  silent?: string[];
  servfail?: string[];
}

/** A running test DNS server on 127.0.0.1 (UDP). */
export interface TestDnsServer {
  /** The UDP port it listens on. */
  readonly port: number;
  /** Datagrams received so far, answered or not. */
  readonly queries: number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_PTR = 12;
const TYPE_AAAA = 28;
const TYPE_MX = 15;
const CLASS_IN = 1;
const RCODE_FORMERR = 1;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;
const HEADER_BYTES = 12;
/** A pointer to offset 12, where the question's name starts (RFC 1035 4.1.4). */
const NAME_POINTER = 0xc000 | HEADER_BYTES;

/**
 * Starts a tiny authoritative DNS server over UDP for tests: PTR, A, AAAA and MX from memory.
 * @example
 * const dns = await startDnsServer({ ptr: { "192.0.2.1": "host.test" }, a: { "host.test": ["192.0.2.1"] } });
 * systemDns([`127.0.0.1:${dns.port}`]); ... await dns.close();
 */
export async function startDnsServer(records: DnsRecords): Promise<TestDnsServer> {
  const table = buildTable(records);
  const socket = createSocket("udp4");
  let queries = 0;
  socket.on("message", (msg: Buffer, from: RemoteInfo) => {
    queries++;
    const reply = answer(msg, table);
    if (reply) socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((res, rej) => {
    socket.once("error", rej);
    socket.bind(0, "127.0.0.1", () => {
      socket.off("error", rej);
      res();
    });
  });
  const { port } = socket.address();
  return {
    port,
    get queries() {
      return queries;
    },
    close: () => new Promise<void>((res) => socket.close(() => res())),
  };
}

interface Table {
  /** Lower-case name -> type -> record data (already encoded). */
  names: Map<string, Map<number, Buffer[]>>;
  silent: Set<string>;
  servfail: Set<string>;
}

function buildTable(records: DnsRecords): Table {
  const names = new Map<string, Map<number, Buffer[]>>();
  const add = (name: string, type: number, data: Buffer): void => {
    const key = normalise(name);
    let byType = names.get(key);
    if (!byType) names.set(key, (byType = new Map()));
    const list = byType.get(type) ?? [];
    list.push(data);
    byType.set(type, list);
  };
  for (const [ip, host] of Object.entries(records.ptr ?? {})) add(arpaName(ip), TYPE_PTR, encodeName(host));
  for (const [host, ips] of Object.entries(records.a ?? {})) for (const ip of ips) add(host, TYPE_A, addressBytes(ip, 4));
  for (const [host, ips] of Object.entries(records.aaaa ?? {})) for (const ip of ips) add(host, TYPE_AAAA, addressBytes(ip, 6));
  for (const [domain, mxs] of Object.entries(records.mx ?? {})) {
    for (const { exchange, priority } of mxs) {
      const pref = Buffer.alloc(2);
      pref.writeUInt16BE(priority, 0);
      add(domain, TYPE_MX, Buffer.concat([pref, encodeName(exchange)]));
    }
  }
  const byName = (list: string[] | undefined): Set<string> => new Set((list ?? []).map((n) => normalise(parseIp(n) ? arpaName(n) : n)));
  return { names, silent: byName(records.silent), servfail: byName(records.servfail) };
}

/** Builds the reply to one datagram, or null to stay silent. */
function answer(msg: Buffer, table: Table): Buffer | null {
  if (msg.length < HEADER_BYTES) return null;
  const flags = msg.readUInt16BE(2);
  if (flags & 0x8000) return null; // a response, not a query
  const q = msg.readUInt16BE(4) === 1 ? readQuestion(msg) : null;
  if (!q) return header(msg, flags, RCODE_FORMERR, 0, 0);
  if (table.silent.has(q.name)) return null;
  if (table.servfail.has(q.name)) return header(msg, flags, RCODE_SERVFAIL, 1, 0, msg.subarray(HEADER_BYTES, q.end));
  if (((flags >>> 11) & 15) !== 0 || q.qclass !== CLASS_IN) return header(msg, flags, RCODE_NOTIMP, 1, 0, msg.subarray(HEADER_BYTES, q.end));
  const byType = table.names.get(q.name);
  if (!byType) return header(msg, flags, RCODE_NXDOMAIN, 1, 0, msg.subarray(HEADER_BYTES, q.end));
  const rdatas = byType.get(q.qtype) ?? [];
  const parts: Buffer[] = [];
  for (const rdata of rdatas) {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(NAME_POINTER, 0);
    rr.writeUInt16BE(q.qtype, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(60, 6); // TTL in seconds; the resolver under test keeps its own TTLs
    rr.writeUInt16BE(rdata.length, 10);
    parts.push(rr, rdata);
  }
  // The question is echoed byte for byte, so a client that randomises case (DNS 0x20) matches it.
  return header(msg, flags, 0, 1, rdatas.length, msg.subarray(HEADER_BYTES, q.end), ...parts);
}

/** Header (id and RD copied from the query; QR, AA, RA set) followed by the given sections. */
function header(query: Buffer, queryFlags: number, rcode: number, qdcount: number, ancount: number, ...rest: Buffer[]): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  query.copy(h, 0, 0, 2);
  h.writeUInt16BE(0x8000 | (queryFlags & 0x7800) | 0x0400 | (queryFlags & 0x0100) | 0x0080 | rcode, 2);
  h.writeUInt16BE(qdcount, 4);
  h.writeUInt16BE(ancount, 6);
  return Buffer.concat([h, ...rest]);
}

/** Reads the single question; null when malformed (questions never use compression). */
function readQuestion(msg: Buffer): { name: string; qtype: number; qclass: number; end: number } | null {
  const labels: string[] = [];
  let i = HEADER_BYTES;
  for (;;) {
    if (i >= msg.length) return null;
    const len = msg[i]!;
    i++;
    if (len === 0) break;
    if (len > 63 || i + len > msg.length) return null; // a pointer (0xc0) or a label running off the end
    labels.push(msg.toString("latin1", i, i + len));
    i += len;
  }
  if (i + 4 > msg.length) return null;
  return { name: normalise(labels.join(".")), qtype: msg.readUInt16BE(i), qclass: msg.readUInt16BE(i + 2), end: i + 4 };
}

function encodeName(name: string): Buffer {
  const labels = normalise(name).split(".").filter((l) => l.length > 0);
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, "latin1");
    if (bytes.length > 63) throw new Error(`DNS label over 63 bytes: ${label}`);
    parts.push(Buffer.of(bytes.length), bytes);
  }
  parts.push(Buffer.of(0));
  return Buffer.concat(parts);
}

function normalise(name: string): string {
  return (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase();
}

/** The address as 4 or 16 network-order bytes. */
function addressBytes(ip: string, version: 4 | 6): Buffer {
  const p = parseIp(ip);
  if (version === 4) {
    if (!p || p.version !== 4 || p.mapped) throw new Error(`not an IPv4 address: ${ip}`);
    const b = Buffer.alloc(4);
    b.writeUInt32BE(p.v4, 0);
    return b;
  }
  const b = Buffer.alloc(16);
  if (p?.version === 6) {
    for (let k = 0; k < 4; k++) b.writeUInt32BE(p.words[k]!, k * 4);
  } else if (p?.mapped) {
    // parseIp folds ::ffff:a.b.c.d into IPv4; AAAA still carries it as the mapped IPv6 address.
    b.writeUInt16BE(0xffff, 10);
    b.writeUInt32BE(p.v4, 12);
  } else {
    throw new Error(`not an IPv6 address: ${ip}`);
  }
  return b;
}

/** The reverse-lookup name of an address (RFC 1035 3.5, RFC 3596 2.5). */
function arpaName(ip: string): string {
  const p = parseIp(ip);
  if (!p) throw new Error(`not an IP address: ${ip}`);
  // Like the service, treat ::ffff:a.b.c.d as the IPv4 address it carries.
  if (p.version === 4) {
    const v = p.v4;
    return `${v & 255}.${(v >>> 8) & 255}.${(v >>> 16) & 255}.${v >>> 24}.in-addr.arpa`;
  }
  const hex = addressBytes(ip, 6).toString("hex");
  return `${[...hex].reverse().join(".")}.ip6.arpa`;
}
