import type { ContentAnalysis, ContentEvidence, ContentModel } from "../scoring/content/index.js";
import { TurnBatcher } from "../shared/turn-batcher.js";
import type { ScoringPool } from "./scoring-pool.js";

/** Texts handed to the pool in one task at most (measured best at 16 with `npm run bench`). */
const CHUNK = 16;

/** An analysis with the text's evidence for an org model (scoring/content/evidence.ts). */
export interface AnalysisWithEvidence {
  analysis: ContentAnalysis;
  evidence: ContentEvidence;
}

interface Pending {
  text: string;
  /** Set for a text whose evidence is wanted (analyzeWithEvidence). */
  withEvidence: ((r: AnalysisWithEvidence) => void) | null;
  resolve: (a: ContentAnalysis) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs the content model (~18 µs a text) on the scoring pool instead of the front thread. A pool
 * hop costs tens of microseconds, so texts go in tasks of up to CHUNK (TurnBatcher).
 *
 * A check never fails for the pool: when it refuses (queue full) or a task fails, or a thread
 * runs another model version than the front's (a model file changed on disk), the texts are
 * analysed here with the front's own model, which is the same code and gives the same answer.
 */
export class ContentBatcher {
  private readonly batch = new TurnBatcher<Pending>(CHUNK, (items) => this.run(items));
  /** Texts analysed on the front because the pool could not take them (see the class comment). */
  fallbacks = 0;

  constructor(
    private readonly pool: ScoringPool,
    private readonly local: ContentModel,
  ) {}

  /** The model's version (as in answers' `model_version`). */
  get version(): string {
    return this.local.version;
  }

  /** The analysis of one text, from a pool thread (or inline when the pool cannot take it). */
  analyze(text: string): Promise<ContentAnalysis> {
    return new Promise((resolve, reject) => this.batch.add({ text, withEvidence: null, resolve, reject }));
  }

  /** analyze(), plus the text's evidence for an org model (checks keep it in their history). */
  analyzeWithEvidence(text: string): Promise<AnalysisWithEvidence> {
    return new Promise((resolve, reject) => this.batch.add({ text, withEvidence: resolve, resolve: noop, reject }));
  }

  private run(items: Pending[]): void {
    const inline = (): void => {
      this.fallbacks += items.length;
      for (const p of items) {
        // One text the model cannot take fails its own request only; the others still get answers.
        try {
          if (p.withEvidence) p.withEvidence(this.local.analyzeWithEvidence(p.text));
          else p.resolve(this.local.analyze(p.text));
        } catch (err) {
          p.reject(err);
        }
      }
    };
    let evidence: boolean[] | undefined;
    for (let i = 0; i < items.length; i++) {
      if (items[i]!.withEvidence === null) continue;
      evidence ??= items.map(() => false);
      evidence[i] = true;
    }
    const task = evidence ? { kind: "content.analyzeBatch" as const, texts: items.map((p) => p.text), evidence } : { kind: "content.analyzeBatch" as const, texts: items.map((p) => p.text) };
    this.pool.run(task).then((r) => {
      if (r.modelVersion !== this.local.version || r.results.length !== items.length || (evidence && r.evidence?.length !== items.length)) return inline();
      for (let i = 0; i < items.length; i++) {
        const p = items[i]!;
        if (p.withEvidence) p.withEvidence({ analysis: r.results[i]!, evidence: r.evidence![i]! });
        else p.resolve(r.results[i]!);
      }
    }, inline);
  }
}

function noop(): void {}
