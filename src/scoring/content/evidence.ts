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

/**
 * Decodes encodeFeatures' text: the ascending feature numbers. Returns null when the text is
 * not such an encoding (a damaged record): callers then treat the evidence as absent.
 */
export function decodeFeatures(text: string): Int32Array | null {
  const b = Buffer.from(text, "base64");
  const out = new Int32Array(Math.min(b.length, MAX_TEXT_FEATURES));
  let n = 0;
  let last = 0;
  let d = 0;
  let shift = 0;
  for (let i = 0; i < b.length; i++) {
    const byte = b[i]!;
    d += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte >= 0x80) {
      if (shift > 28) return null;
      continue;
    }
    if (n === out.length) return null;
    last += d;
    if (last > 0x7fffffff) return null;
    out[n++] = last;
    d = 0;
    shift = 0;
  }
  if (shift !== 0) return null;
  return out.subarray(0, n);
}
