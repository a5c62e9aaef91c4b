/**
 * Content model for form submissions: spam probability (a calibrated linear text classifier,
 * trained by scripts/train-content-model.ts), language, flags, cold-email and fraud scores.
 *
 * Loading reads data/content-model/model.bin once (loadContentModel); `analyze` is pure and does
 * no I/O. See data/content-model/manifest.json for the training data and metrics.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../config/index.js";
import { spamProbability } from "./classifier.js";
import { scoreWithEvidence, type ContentEvidence } from "./evidence.js";
import { coldEmailScore } from "./cold-email.js";
import { detectFlags } from "./flags.js";
import { fraudScore } from "./fraud.js";
import { detectLanguage } from "./language.js";
import { scanText } from "./lead-words.js";
import { MODEL_FILE, decodeModel, type DecodedModel } from "./model-file.js";

export { formText, MAX_FORM_TEXT } from "./form-text.js";
export type { ContentEvidence } from "./evidence.js";
export { FLAGS, type ContentFlag } from "./flags.js";

/** Default model folder. */
export const CONTENT_MODEL_DIR = join(REPO_ROOT, "data/content-model");
/** Longest text analysed; longer input is cut (the classifier itself reads the first 1,500 characters). */
export const MAX_ANALYZE_CHARS = 5000;

/** What the content model says about one text. */
export interface ContentAnalysis {
  /** Calibrated probability that the text is spam, 0..1 (4 decimals). */
  spam_probability: number;
  /** ISO 639-1 language, null when the text is too short to tell. */
  language: string | null;
  /** Flags raised (FLAGS order); empty when none. */
  flags: string[];
  /** Unsolicited sales outreach, 0..1 (phrase model; see cold-email.ts). */
  cold_email: number;
  /** Phishing / scam cues, 0..1 (noisy-OR of cues; see fraud.ts). */
  fraud: number;
}

/** A loaded content model. */
export interface ContentModel {
  /** Model version (as in manifest.json), e.g. `content-2.0748b140a864`. */
  version: string;
  /** Analyses one text. Pure; safe to call concurrently from one thread. */
  analyze(text: string): ContentAnalysis;
  /** analyze(), plus what an org's own model needs of the text (evidence.ts), from the same feature extraction. */
  analyzeWithEvidence(text: string): { analysis: ContentAnalysis; evidence: ContentEvidence };
}

/** Builds a ContentModel from decoded weights (for tests and tools that hold a model in memory). */
export function contentModelFrom(model: DecodedModel): ContentModel {
  const cut = (input: string): string => (input.length > MAX_ANALYZE_CHARS ? input.slice(0, MAX_ANALYZE_CHARS) : input);
  const analysisOf = (text: string, probability: number): ContentAnalysis => {
    // One pass finds which word-list patterns can match; flags, cold-email and fraud share it.
    const scan = scanText(text);
    const flags = detectFlags(text, scan);
    return {
      spam_probability: Math.round(probability * 1e4) / 1e4,
      language: detectLanguage(text),
      flags,
      cold_email: coldEmailScore(text, scan.leads),
      fraud: fraudScore(text, flags, scan.leads),
    };
  };
  return {
    version: model.header.version,
    analyze(input: string): ContentAnalysis {
      const text = cut(input);
      return analysisOf(text, spamProbability(model, text));
    },
    analyzeWithEvidence(input: string) {
      const text = cut(input);
      const { probability, evidence } = scoreWithEvidence(model, text);
      return { analysis: analysisOf(text, probability), evidence };
    },
  };
}

/**
 * Loads the model from `dir` (default data/content-model). Throws when the file is missing or
 * not a model file: the service cannot score content without it.
 */
export function loadContentModel(dir: string = CONTENT_MODEL_DIR): ContentModel {
  return contentModelFrom(decodeModel(readFileSync(join(dir, MODEL_FILE))));
}
