/**
 * Gathers what one event-loop turn produces and hands it to another thread in batches of at most
 * `max`: a full batch leaves at once, so the other thread starts on it while this one still works
 * through the rest of the turn; the remainder leaves at the end of the turn (setImmediate).
 * Handing a whole turn over at once made the two threads take turns (bench/README.md).
 * Used for intents to the store writer and texts to the scoring pool.
 */
export class TurnBatcher<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(
    private readonly max: number,
    private readonly send: (items: T[]) => void,
  ) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.max) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private flush = (): void => {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const out = this.items;
    this.items = [];
    this.send(out);
  };
}
