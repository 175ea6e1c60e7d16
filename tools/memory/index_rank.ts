// Ranking helpers: top-k selection, key order, and the fusion of the
// lexical and vector rankings.

import type { RankedKey, Rankings } from "./model.ts";

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

/** Reciprocal rank fusion: score = Σ 1/(k + rank), rank 1-based, per ranking a key appears in. */
export function fuse(
  rankings: Rankings,
  limit: number,
  options: { k?: number; vectorWeight?: number } = {},
): {
  key: string;
  score: number;
  lexical_rank?: number;
  vector_rank?: number;
}[] {
  const fused = new Map<
    string,
    { key: string; score: number; lexical_rank?: number; vector_rank?: number }
  >();
  const k = options.k ?? 60;
  const add = (
    hits: RankedKey[],
    field: "lexical_rank" | "vector_rank",
    weight: number,
  ) => {
    hits.forEach((hit, i) => {
      const item = fused.get(hit.key) ?? { key: hit.key, score: 0 };
      item.score += weight / (k + i + 1);
      item[field] = i + 1;
      fused.set(hit.key, item);
    });
  };
  add(rankings.lexical, "lexical_rank", 1);
  add(rankings.vector, "vector_rank", options.vectorWeight ?? 1);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || compareKeys(a.key, b.key))
    .slice(0, Math.max(0, limit));
}
