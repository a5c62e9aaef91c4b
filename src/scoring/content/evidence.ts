/**
 * What a check keeps of a text so that the org's own model (adapt/) can learn from feedback on
 * it later without the text: the global model's calibrated log-odds and the text's distinct word
 * features (the unigram and bigram buckets the global model hashes them into). Pure.
 *
 * Features travel and are stored as one short string: the ascending bucket numbers as LEB128
 * deltas, base64 (about 2 bytes a feature, so 200-800 characters for a message).
 */
import { extractFeatures } from "./features.js";
import type { DecodedModel } from "./model-file.js";
import { calibrate, logitOfFeatures } from "./classifier.js";

/** A text's evidence for the org model. Plain data (crosses threads, is stored in check history). */
export interface ContentEvidence {
  /** The global model's calibrated log-odds of spam (Platt), unrounded. */
  logit: number;
  /** Distinct word features, ascending, encoded (encodeFeatures). */
  features: string;
}

/** Most distinct word features kept of one text (a 1,500-character text has fewer). */
export const MAX_TEXT_FEATURES = 1024;

const unique = new Int32Array(MAX_TEXT_FEATURES);

/**
 * The global model's calibrated probability and the evidence of `text`, from one feature
 * extraction (what rawLogit and spamProbability would compute, plus the word features).
 */
export function scoreWithEvidence(model: DecodedModel, text: string): { probability: number; evidence: ContentEvidence } {
  const f = extractFeatures(text, model.header.bits);
  const z = logitOfFeatures(model, f);
  const n = distinctSorted(f.indices, f.words, unique);
  const logit = model.header.calibration.a * z + model.header.calibration.b;
  return { probability: calibrate(model, z), evidence: { logit, features: encodeFeatures(unique, n) } };
}

/** Copies the distinct values of `src[0..count)` into `out`, ascending; returns how many (at most out.length). */
function distinctSorted(src: Int32Array, count: number, out: Int32Array): number {
  const tmp = src.slice(0, count).sort();
  let n = 0;
  for (let i = 0; i < tmp.length && n < out.length; i++) if (n === 0 || tmp[i] !== out[n - 1]) out[n++] = tmp[i]!;
  return n;
}

const bytes = new Uint8Array(MAX_TEXT_FEATURES * 5);

/** Encodes ascending non-negative integers `v[0..n)` as base64 LEB128 deltas. */
export function encodeFeatures(v: ArrayLike<number>, n = v.length): string {
  let o = 0;
  let last = 0;
  for (let i = 0; i < n; i++) {
    let d = v[i]! - last;
    last = v[i]!;
    while (d >= 0x80) {
      bytes[o++] = (d & 0x7f) | 0x80;
      d >>>= 7;
    }
    bytes[o++] = d;
  }
  return Buffer.from(bytes.buffer, 0, o).toString("base64");
}

/** Base64 of the longest encoding (MAX_TEXT_FEATURES features of at most 5 bytes). */
const MAX_ENCODED_CHARS = Math.ceil((MAX_TEXT_FEATURES * 5) / 3) * 4;
const decodedBytes = Buffer.alloc(MAX_TEXT_FEATURES * 5 + 3);
const decodedFeatures = new Int32Array(MAX_TEXT_FEATURES);

/**
 * Decodes encodeFeatures' text: the ascending feature numbers. Returns null when the text is
 * not such an encoding (a damaged record): callers then treat the evidence as absent.
 */
export function decodeFeatures(text: string): Int32Array | null {
  const n = decodeFeaturesInto(text, decodedFeatures);
  return n < 0 ? null : decodedFeatures.slice(0, n);
}

/**
 * decodeFeatures into `out` (at least MAX_TEXT_FEATURES long) without allocating: how many
 * features, or -1 for a damaged text. For the front's per-check scoring of an org's model.
 */
export function decodeFeaturesInto(text: string, out: Int32Array): number {
  if (text.length > MAX_ENCODED_CHARS) return -1;
  const len = decodedBytes.write(text, 0, "base64");
  const max = Math.min(out.length, MAX_TEXT_FEATURES);
  let n = 0;
  let last = 0;
  let d = 0;
  // 128^k for the k-th byte of a number (a multiplication: `2 ** shift` with a variable shift is a call).
  let scale = 1;
  for (let i = 0; i < len; i++) {
    const byte = decodedBytes[i]!;
    d += (byte & 0x7f) * scale;
    scale *= 128;
    if (byte >= 0x80) {
      if (scale > 2 ** 28) return -1;
      continue;
    }
    if (n === max) return -1;
    last += d;
    if (last > 0x7fffffff) return -1;
    out[n++] = last;
    d = 0;
    scale = 1;
  }
  if (scale !== 1) return -1;
  return n;
}
