// Ranking helpers: top-k selection, key order, and the fusion of the
// lexical and vector rankings.

import type { RankedKey, Rankings } from "./model.ts";

/**
 * Keeps the `limit` best (score desc, then key asc) of a stream of
 * candidates: a heap of at most `limit` with the worst kept at its root, so a
 * candidate below it costs one comparison, and a tie with it one key
 * comparison (many entries can score the same).
 */
/** The key of each slot of an index. */
export interface SlotKeys {
  keyAt(slot: number): string;
}

export class TopK {
  #ids: number[] = [];
  #scores: number[] = [];

  /**
   * Candidates are ids: slots of `keys`, or rows that `rows` maps to slots.
   * `keys` is the index's own, made once, not a closure per search (the
   * lexical ranking of equal scores was the search's largest self time
   * under bench/sessions_bench.ts).
   */
  constructor(
    readonly limit: number,
    readonly keys: SlotKeys,
    readonly rows?: { slotOf(row: number): number },
  ) {}

  keyOf(id: number): string {
    const rows = this.rows;
    return this.keys.keyAt(rows === undefined ? id : rows.slotOf(id));
  }

  push(id: number, score: number): void {
    const ids = this.#ids;
    const scores = this.#scores;
    if (ids.length === this.limit) {
      // Full: only a candidate above the worst kept gets in, in its place.
      const worst = scores[0];
      if (
        this.limit === 0 || score < worst ||
        (score === worst && this.keyOf(id) > this.keyOf(ids[0]))
      ) return;
      ids[0] = id;
      scores[0] = score;
      this.#down(0);
      return;
    }
    ids.push(id);
    scores.push(score);
    this.#up(ids.length - 1);
  }

  result(): RankedKey[] {
    return this.#ids
      .map((id, i) => ({ key: this.keyOf(id), score: this.#scores[i] }))
      .sort((a, b) => b.score - a.score || compareKeys(a.key, b.key));
  }

  /** Whether (score a, id a) ranks below (score b, id b); a tie by key, one comparison. */
  #below(sa: number, ia: number, sb: number, ib: number): boolean {
    if (sa !== sb) return sa < sb;
    return this.keyOf(ia) > this.keyOf(ib);
  }

  #up(i: number): void {
    const ids = this.#ids;
    const scores = this.#scores;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#below(scores[i], ids[i], scores[parent], ids[parent])) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const ids = this.#ids;
    const scores = this.#scores;
    const n = ids.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (
        left < n &&
        this.#below(scores[left], ids[left], scores[worst], ids[worst])
      ) worst = left;
      if (
        right < n &&
        this.#below(scores[right], ids[right], scores[worst], ids[worst])
      ) worst = right;
      if (worst === i) return;
      this.#swap(i, worst);
      i = worst;
    }
  }

  #swap(a: number, b: number): void {
    const ids = this.#ids;
    const scores = this.#scores;
    [ids[a], ids[b]] = [ids[b], ids[a]];
    [scores[a], scores[b]] = [scores[b], scores[a]];
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
