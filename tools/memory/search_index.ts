// In-memory search over one namespace: BM25 over an incrementally maintained
// inverted index, and exact cosine similarity over Float32 slabs scanned by a
// tiny WebAssembly SIMD kernel (with a plain JS fallback).
// Tokenizer: search_tokens.ts; vector slabs: search_vectors.ts.

import type { Embedding, RankedKey, Rankings, SearchQuery } from "./model.ts";
import { tokenize } from "./search_tokens.ts";
import { unitScale, VectorSlab } from "./search_vectors.ts";

export { indexText, queryTerms, tokenize } from "./search_tokens.ts";

// ---- ranking helpers -----------------------------------------------------------

/** Keeps the `limit` best (score desc, then key asc) of a stream of candidates. */
class TopK {
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

function compareKeys(a: string, b: string): number {
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

// ---- the index -----------------------------------------------------------------

const K1 = 1.2;
const B = 0.75;

/** One term's postings: parallel growable arrays of slots and term frequencies. */
interface Posting {
  term: string;
  slots: Uint32Array;
  tfs: Uint32Array;
  size: number;
}

export class SearchIndex {
  #slotOf = new Map<string, number>();
  #keys: string[] = [];
  #terms: (Posting[] | undefined)[] = [];
  #lengths: number[] = [];
  #vectors: ({ slab: VectorSlab; row: number } | undefined)[] = [];
  #free: number[] = [];
  #postings = new Map<string, Posting>();
  #slabs = new Map<string, VectorSlab>();
  #totalLength = 0;
  /** Per-slot BM25 accumulator, kept zeroed between searches. */
  #scratch = new Float64Array(0);

  get size(): number {
    return this.#slotOf.size;
  }

  /**
   * Adds or replaces `key`. Not indexed: a zero or non-finite vector, and one
   * whose length differs from the first vector of the same embedder.
   */
  upsert(key: string, text: string, embedding: Embedding | null): void {
    this.remove(key);
    const slot = this.#free.pop() ?? this.#keys.length;
    this.#slotOf.set(key, slot);
    this.#keys[slot] = key;
    const tokens = tokenize(text);
    const postings: Posting[] = [];
    for (const term of tokens) {
      let p = this.#postings.get(term);
      if (!p) {
        p = {
          term,
          slots: new Uint32Array(2),
          tfs: new Uint32Array(2),
          size: 0,
        };
        this.#postings.set(term, p);
      }
      // This document's postings are appended last, so a repeat is the last one.
      if (p.size > 0 && p.slots[p.size - 1] === slot) {
        p.tfs[p.size - 1]++;
        continue;
      }
      if (p.size === p.slots.length) {
        p.slots = grow(p.slots);
        p.tfs = grow(p.tfs);
      }
      p.slots[p.size] = slot;
      p.tfs[p.size++] = 1;
      postings.push(p);
    }
    this.#terms[slot] = postings;
    this.#lengths[slot] = tokens.length;
    this.#totalLength += tokens.length;
    this.#vectors[slot] = undefined;
    const scale = embedding && unitScale(embedding.vector);
    if (embedding && scale) {
      let slab = this.#slabs.get(embedding.embedder);
      if (!slab) {
        this.#slabs.set(
          embedding.embedder,
          slab = new VectorSlab(embedding.vector.length),
        );
      }
      if (slab.dim === embedding.vector.length) {
        this.#vectors[slot] = {
          slab,
          row: slab.add(embedding.vector, scale, slot),
        };
      }
    }
  }

  remove(key: string): void {
    const slot = this.#slotOf.get(key);
    if (slot === undefined) return;
    this.#slotOf.delete(key);
    for (const p of this.#terms[slot] ?? []) {
      const i = p.slots.subarray(0, p.size).lastIndexOf(slot);
      p.size--;
      p.slots[i] = p.slots[p.size];
      p.tfs[i] = p.tfs[p.size];
      if (p.size === 0) this.#postings.delete(p.term);
    }
    this.#totalLength -= this.#lengths[slot];
    const vector = this.#vectors[slot];
    if (vector) {
      const moved = vector.slab.remove(vector.row);
      const movedVector = moved === undefined
        ? undefined
        : this.#vectors[moved];
      if (movedVector) movedVector.row = vector.row;
    }
    this.#terms[slot] = undefined;
    this.#vectors[slot] = undefined;
    this.#keys[slot] = "";
    this.#free.push(slot);
  }

  search(query: SearchQuery): Rankings {
    const limit = Math.max(0, Math.floor(query.limit));
    return {
      lexical: this.#lexical(query.terms, limit),
      vector: this.#vector(query, limit),
    };
  }

  #lexical(terms: string[], limit: number): RankedKey[] {
    const n = this.#slotOf.size;
    if (limit === 0 || n === 0) return [];
    if (this.#scratch.length < this.#keys.length) {
      this.#scratch = new Float64Array(this.#keys.length * 2);
    }
    const scores = this.#scratch;
    const touched: number[] = [];
    const avgLength = this.#totalLength / n || 1;
    for (const term of new Set(terms)) {
      const p = this.#postings.get(term);
      if (!p) continue;
      // Lucene's idf: always positive, so a term in most documents still counts a little.
      const idf = Math.log(1 + (n - p.size + 0.5) / (p.size + 0.5));
      for (let i = 0; i < p.size; i++) {
        const slot = p.slots[i];
        const tf = p.tfs[i];
        if (scores[slot] === 0) touched.push(slot);
        const norm = K1 * (1 - B + B * this.#lengths[slot] / avgLength);
        scores[slot] += idf * tf * (K1 + 1) / (tf + norm);
      }
    }
    const top = new TopK(limit, (slot) => this.#keys[slot]);
    for (const slot of touched) {
      top.push(slot, scores[slot]);
      scores[slot] = 0;
    }
    return top.result();
  }

  /** Only rows with positive similarity count as hits. */
  #vector(query: SearchQuery, limit: number): RankedKey[] {
    const slab = query.embedder === undefined
      ? undefined
      : this.#slabs.get(query.embedder);
    const vector = query.vector;
    const scale = vector && unitScale(vector);
    if (!slab || !vector || !scale || vector.length !== slab.dim || !limit) {
      return [];
    }
    const scores = slab.scores(vector, scale);
    const top = new TopK(limit, (row) => this.#keys[slab.slots[row]]);
    for (let row = 0; row < scores.length; row++) {
      if (scores[row] > 0) top.push(row, scores[row]);
    }
    return top.result();
  }
}

function grow(array: Uint32Array): Uint32Array {
  const bigger = new Uint32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
