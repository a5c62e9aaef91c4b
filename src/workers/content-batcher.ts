import type { ContentAnalysis, ContentModel } from "../scoring/content/index.js";
import type { ScoringPool } from "./pool.js";

/** Texts handed to the pool in one task at most. */
const CHUNK = 16;

/**
 * Runs the content model (~18 µs a text) on the scoring pool instead of the front thread. A pool
 * hop costs tens of microseconds, so texts are gathered: those of one event-loop turn go in
 * tasks of up to CHUNK, and the first task leaves as soon as it is full, so a pool thread starts
 * on it while the front still parses the rest of the turn's requests.
 *
 * A check never fails for the pool: when it refuses (queue full) or a task fails, or a thread
 * runs another model version than the front's (a model file changed on disk), the texts are
 * analysed here with the front's own model, which is the same code and gives the same answer.
 */
export class ContentBatcher {
  private texts: string[] = [];
  private waiters: Array<{ resolve: (a: ContentAnalysis) => void; reject: (err: unknown) => void }> = [];
  private scheduled = false;
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
    return new Promise((resolve, reject) => {
      this.texts.push(text);
      this.waiters.push({ resolve, reject });
      if (this.texts.length >= CHUNK) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private flush = (): void => {
    this.scheduled = false;
    if (this.texts.length === 0) return;
    const texts = this.texts;
    const waiters = this.waiters;
    this.texts = [];
    this.waiters = [];
    const inline = (): void => {
      this.fallbacks += texts.length;
      for (let i = 0; i < texts.length; i++) {
        // One text the model cannot take fails its own request only; the others still get answers.
        try {
          waiters[i]!.resolve(this.local.analyze(texts[i]!));
        } catch (err) {
          waiters[i]!.reject(err);
        }
      }
    };
    this.pool.run({ kind: "content.analyzeBatch", texts }).then((r) => {
      if (r.modelVersion !== this.local.version || r.results.length !== texts.length) return inline();
      for (let i = 0; i < texts.length; i++) waiters[i]!.resolve(r.results[i]!);
    }, inline);
  };
}
