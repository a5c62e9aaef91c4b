/**
 * An org model compiled for scoring checks (front thread): each counted feature's naive Bayes
 * log-ratio computed once, so a check costs one hash lookup per distinct word of its text.
 */
import { decodeFeatures, type ContentEvidence } from "../content/evidence.js";
import { ORG_MODEL_SETTINGS, orgLogit, type OrgModel, type OrgModelSettings } from "./model.js";

export interface OrgScorer {
  /** The model's version (feedback applied), as answers name it (`+org:<version>`). */
  version: number;
  /** The org model's probability of spam for a text's evidence; the global one when the evidence is damaged. */
  probability(evidence: ContentEvidence): number;
}

/** Compiles `model`; same scores as nbScore/orgLogit (model.ts). */
export function compileOrgModel(model: OrgModel, settings: OrgModelSettings = ORG_MODEL_SETTINGS): OrgScorer {
  const { alpha } = settings;
  const spamDen = Math.log(model.spam + 2 * alpha);
  const hamDen = Math.log(model.ham + 2 * alpha);
  const ratio = new Map<number, number>();
  for (const [f, [s, h]] of model.counts) ratio.set(f, Math.log(s + alpha) - spamDen - Math.log(h + alpha) + hamDen);
  return {
    version: model.version,
    probability(evidence) {
      const f = decodeFeatures(evidence.features);
      if (!f) return 1 / (1 + Math.exp(-evidence.logit));
      let sum = 0;
      for (let i = 0; i < f.length; i++) sum += ratio.get(f[i]!) ?? 0;
      const nb = sum / Math.sqrt(Math.max(f.length, settings.nbFloor));
      return 1 / (1 + Math.exp(-orgLogit(model, evidence.logit, nb)));
    },
  };
}
