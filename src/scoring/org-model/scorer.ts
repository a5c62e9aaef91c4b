/**
 * An org model compiled for scoring checks (front thread): each counted feature's naive Bayes
 * log-ratio and its weight folded into one number once (b · ratio + weight), so a check costs
 * one hash lookup per distinct word of its text, as with naive Bayes alone.
 */
import { decodeFeatures, type ContentEvidence } from "../content/evidence.js";
import { ORG_MODEL_SETTINGS, type OrgModel, type OrgModelSettings } from "./model.js";

export interface OrgScorer {
  /** The model's version (feedback applied), as answers name it (`+org:<version>`). */
  version: number;
  /** The org model's probability of spam for a text's evidence; the global one when the evidence is damaged. */
  probability(evidence: ContentEvidence): number;
}

/** Compiles `model`; same scores as orgLogit(model, g, nbScore, deltaScore) (model.ts), up to rounding. */
export function compileOrgModel(model: OrgModel, settings: OrgModelSettings = ORG_MODEL_SETTINGS): OrgScorer {
  const { alpha } = settings;
  const { a, b, c } = model.calibration;
  const spamDen = Math.log(model.spam + 2 * alpha);
  const hamDen = Math.log(model.ham + 2 * alpha);
  const weight = new Map<number, number>();
  for (const [f, [s, h]] of model.counts) weight.set(f, b * (Math.log(s + alpha) - spamDen - Math.log(h + alpha) + hamDen) + (model.weights.get(f) ?? 0));
  return {
    version: model.version,
    probability(evidence) {
      const f = decodeFeatures(evidence.features);
      if (!f) return 1 / (1 + Math.exp(-evidence.logit));
      let sum = 0;
      for (let i = 0; i < f.length; i++) sum += weight.get(f[i]!) ?? 0;
      return 1 / (1 + Math.exp(-(a * evidence.logit + c + sum / Math.sqrt(Math.max(f.length, settings.nbFloor)))));
    },
  };
}
