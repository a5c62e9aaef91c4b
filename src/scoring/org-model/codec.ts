/**
 * The stored form of an org model (model.ts): one binary record, written by the writer thread
 * after each feedback and read by the front threads that score the org's checks.
 *
 * Layout, little-endian (format 2):
 *   "FSOM", u8 format
 *   u32 version, u32 spam, u32 ham, f32 a, f32 b, f32 c
 *   u32 n, then n × (varint feature delta, varint spam count, varint ham count, f32 weight), features ascending
 *   u32 r, then r × (u32 key, f32 g, f32 nb, f32 d, u8 spam), oldest first
 * About 8-9 bytes a counted feature: at most about 170 KB at the model's bounds.
 *
 * Format 1 (stored before the per-feature weights) has no weight and no d: it still loads, as a
 * model whose weights are all 0, and is stored as format 2 at the org's next feedback.
 */
import type { FeatureEntry, OrgModel, RecentExample } from "./model.js";

const MAGIC = "FSOM";
export const ORG_MODEL_FORMAT = 2;

export function encodeOrgModel(m: OrgModel): Buffer {
  const feats = [...m.counts.keys()].sort((x, y) => x - y);
  const out = Buffer.alloc(5 + 24 + 4 + feats.length * 19 + 4 + m.recent.length * 17);
  let o = out.write(MAGIC, 0, "latin1");
  o = out.writeUInt8(ORG_MODEL_FORMAT, o);
  o = out.writeUInt32LE(m.version, o);
  o = out.writeUInt32LE(m.spam, o);
  o = out.writeUInt32LE(m.ham, o);
  o = out.writeFloatLE(m.calibration.a, o);
  o = out.writeFloatLE(m.calibration.b, o);
  o = out.writeFloatLE(m.calibration.c, o);
  o = out.writeUInt32LE(feats.length, o);
  const varint = (v: number): void => {
    while (v >= 0x80) {
      out[o++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    out[o++] = v;
  };
  let last = 0;
  for (const f of feats) {
    const [s, h, w] = m.counts.get(f)!;
    varint(f - last);
    last = f;
    varint(s);
    varint(h);
    o = out.writeFloatLE(w, o);
  }
  o = out.writeUInt32LE(m.recent.length, o);
  for (const r of m.recent) {
    o = out.writeUInt32LE(r.key, o);
    o = out.writeFloatLE(r.g, o);
    o = out.writeFloatLE(r.nb, o);
    o = out.writeFloatLE(r.d, o);
    o = out.writeUInt8(r.spam ? 1 : 0, o);
  }
  return out.subarray(0, o);
}

/** Parses a stored org model; throws with a precise message when the bytes are not one. */
export function decodeOrgModel(bytes: Uint8Array): OrgModel {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 33 || b.toString("latin1", 0, 4) !== MAGIC) throw new Error("org model: bad magic");
  const format = b.readUInt8(4);
  if (format !== 1 && format !== ORG_MODEL_FORMAT) throw new Error(`org model: format ${format}, this reader knows 1 and ${ORG_MODEL_FORMAT}`);
  const weighted = format >= 2;
  let o = 5;
  const u32 = (): number => {
    const v = b.readUInt32LE(o);
    o += 4;
    return v;
  };
  const f32 = (): number => {
    const v = b.readFloatLE(o);
    o += 4;
    return v;
  };
  const varint = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const byte = b[o++];
      if (byte === undefined) throw new Error("org model: truncated");
      v += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) return v;
    }
  };
  const version = u32();
  const spam = u32();
  const ham = u32();
  const calibration = { a: f32(), b: f32(), c: f32() };
  const n = u32();
  const counts = new Map<number, FeatureEntry>();
  let last = 0;
  for (let i = 0; i < n; i++) {
    last += varint();
    const s = varint();
    counts.set(last, [s, varint(), weighted ? f32() : 0]);
  }
  const r = u32();
  const recent: RecentExample[] = [];
  for (let i = 0; i < r; i++) {
    const key = u32();
    const g = f32();
    const nb = f32();
    const d = weighted ? f32() : 0;
    const s = b.readUInt8(o++);
    recent.push({ key, g, nb, d, spam: s === 1 });
  }
  if (o !== b.length) throw new Error(`org model: ${b.length - o} bytes past the end`);
  return { version, spam, ham, counts, calibration, recent };
}
