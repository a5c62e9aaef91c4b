/**
 * The content model's file format (data/content-model/model.bin), written by
 * scripts/train-content-model.ts and read by loadContentModel.
 *
 * Layout, little-endian:
 *   "FSCM"                      magic
 *   u32 header length, then that many bytes of UTF-8 JSON (ModelHeader)
 *   u32 n                       number of non-zero weights
 *   n LEB128 varints            bucket index deltas (ascending buckets; the first is absolute)
 *   n int8                      quantised weights (weight = q * header.scale)
 * Only non-zero buckets are stored, so the file grows with what pruning kept, not with 2^bits.
 */

export const MODEL_FILE = "model.bin";
export const MODEL_FORMAT = 1;
const MAGIC = "FSCM";

/** What the model needs besides its weights; everything a reader must agree on. */
export interface ModelHeader {
  format: typeof MODEL_FORMAT;
  /** Model version, also in manifest.json. */
  version: string;
  /** log2 of the number of hash buckets. */
  bits: number;
  /** Dequantisation step: weight = int8 * scale. */
  scale: number;
  /** Intercept of the linear model (log-odds). */
  bias: number;
  /** Platt scaling of the raw logit z: p = 1 / (1 + exp(-(a * z + b))). */
  calibration: { method: "platt"; a: number; b: number };
}

/** A decoded model: header plus dense int8 weights of length 2^bits. */
export interface DecodedModel {
  header: ModelHeader;
  weights: Int8Array;
}

/** Serialises a model; buckets with weight 0 are left out. Deterministic for equal input. */
export function encodeModel(header: ModelHeader, weights: Int8Array): Buffer {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const idx: number[] = [];
  for (let i = 0; i < weights.length; i++) if (weights[i] !== 0) idx.push(i);
  const varints: number[] = [];
  let last = 0;
  for (const i of idx) {
    let d = i - last;
    last = i;
    while (d >= 0x80) {
      varints.push((d & 0x7f) | 0x80);
      d >>>= 7;
    }
    varints.push(d);
  }
  const out = Buffer.alloc(4 + 4 + json.length + 4 + varints.length + idx.length);
  let o = out.write(MAGIC, 0, "latin1");
  o = out.writeUInt32LE(json.length, o);
  o += json.copy(out, o);
  o = out.writeUInt32LE(idx.length, o);
  for (const v of varints) out[o++] = v;
  for (const i of idx) out.writeInt8(weights[i]!, o++);
  return out;
}

/** Parses a model file; throws with a precise message when it is not one. */
export function decodeModel(bytes: Uint8Array): DecodedModel {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 12 || b.toString("latin1", 0, 4) !== MAGIC) throw new Error("content model: not a model file (bad magic)");
  const hlen = b.readUInt32LE(4);
  const header = JSON.parse(b.toString("utf8", 8, 8 + hlen)) as ModelHeader;
  if (header.format !== MODEL_FORMAT) throw new Error(`content model: format ${String(header.format)}, this reader knows ${MODEL_FORMAT}`);
  if (!Number.isInteger(header.bits) || header.bits < 10 || header.bits > 24) throw new Error(`content model: bad bits ${header.bits}`);
  let o = 8 + hlen;
  const n = b.readUInt32LE(o);
  o += 4;
  const weights = new Int8Array(2 ** header.bits);
  const idx = new Int32Array(n);
  let last = 0;
  for (let k = 0; k < n; k++) {
    let d = 0;
    let shift = 0;
    for (;;) {
      const byte = b[o++];
      if (byte === undefined) throw new Error("content model: truncated index list");
      d += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    last += d;
    if (last >= weights.length) throw new Error(`content model: bucket ${last} out of range`);
    idx[k] = last;
  }
  if (o + n !== b.length) throw new Error(`content model: ${b.length - o} weight bytes for ${n} buckets`);
  for (let k = 0; k < n; k++) weights[idx[k]!] = b.readInt8(o + k);
  return { header, weights };
}
