// Ranking helpers of SearchIndex: top-k selection and key order.

import type { RankedKey } from "./model.ts";

/** Keeps the `limit` best (score desc, then key asc) of a stream of candidates. */
export class TopK {
  #hits: { id: number; score: number }[] = [];
  /** Once `limit` hits are kept, anything scoring below the worst of them is dropped at once. */
  #floor = -Infinity;

  constructor(readonly limit: number, readonly keyOf: (id: number) => string) {}

  push(id: number, score: number): void {
    if (this.limit === 0 || score < this.#floor) return;
    this.#hits.push({ id, score });
    if (this.#hits.length >= 2 * this.limit + 256) this.#prune();
  }

  result(): RankedKey[] {
    this.#prune();
    return this.#hits.map((h) => ({ key: this.keyOf(h.id), score: h.score }));
  }

  #prune(): void {
    this.#hits.sort((a, b) =>
      b.score - a.score || compareKeys(this.keyOf(a.id), this.keyOf(b.id))
    );
    if (this.#hits.length < this.limit) return;
    this.#hits.length = this.limit;
    this.#floor = this.#hits[this.limit - 1].score;
  }
}

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
