// In-memory search over one namespace: BM25 over an incrementally maintained
// inverted index, and exact cosine similarity over int8 vector slabs scanned
// by a tiny WebAssembly SIMD kernel (with a plain JS fallback). Everything per
// entry lives in typed arrays (no JS object per entry), and the whole index
// exports to / imports from IndexData, which index_snapshot.ts persists.
// Tokenizer: search_tokens.ts; postings: search_postings.ts; vector slabs:
// search_vectors.ts.

import type { Embedding, RankedKey, Rankings, SearchQuery } from "./model.ts";
import { tokenize } from "./search_tokens.ts";
import { quantiseRow, type SlabData, VectorSlab } from "./search_vectors.ts";
import {
  Arena,
  ArrayStrings,
  ByteStrings,
  Dictionary,
  grown,
  type StringList,
} from "./index_arrays.ts";
import { type SlotKeys, TopK } from "./index_rank.ts";
import { Postings, type PostingsData } from "./search_postings.ts";

export { indexText, queryTerms, tokenize } from "./search_tokens.ts";

// ---- the index -----------------------------------------------------------------

const K1 = 1.2;
const B = 0.75;
/**
 * A respelled word (search_respell.ts) counts less than a word the query
 * spelled: it may be a word the query did mean but nobody said. Tuned on the
 * dialogue benches' tuning questions with one slip (0.5, 0.7, 0.85, 1): 1
 * ranked slips best but cost clean questions of the first dialogue set MRR;
 * 0.7 kept every clean figure.
 */
const RESPELLED_WEIGHT = 0.7;

/** What an entry carries besides its text and vector, for list-by-tag and re-embedding. */
export interface EntryMeta {
  tags: string[];
  sensitive: boolean;
  embedder: string | null;
}

/** The whole index with live slots renumbered 0..n-1: what a snapshot holds. */
export interface IndexData extends PostingsData {
  /** By slot. */
  keys: StringList;
  lengths: Uint32Array;
  sensitive: Uint8Array;
  /** 0: no embedding; else 1 + index into `embedders`. */
  embedderOf: Uint16Array;
  embedders: string[];
  tags: string[];
  /** n + 1 offsets into tagIds. */
  tagOffsets: Uint32Array;
  tagIds: Uint32Array;
  /** `embedder`: index into `embedders`. */
  slabs: (SlabData & { embedder: number })[];
}

export class SearchIndex {
  /**
   * A loaded snapshot's keys, by slot: slot s holds key s while #keys[s] is
   * undefined (no JS string of them is made at a load; found by indexOf).
   */
  #baseKeys: StringList = new ArrayStrings([]);
  /** Keys placed since (a removed slot's is ""), by slot. */
  #keys: (string | undefined)[] = [];
  /** key → slot of the keys in #keys. */
  #placed = new Map<string, number>();
  /** Slots used (live or free). */
  #slots = 0;
  #live = new Uint8Array(16);
  #count = 0;
  #free: number[] = [];
  #lengths = new Uint32Array(16);
  #sensitive = new Uint8Array(16);
  #embedderOf = new Uint16Array(16);
  #vectorRow = new Int32Array(16).fill(-1);
  #totalLength = 0;
  /** Each slot's distinct term ids, to take it out of the postings; derived on first use after a load. */
  #docTermsArena: Arena | null = new Arena();
  #docTags = new Arena();
  #postings = new Postings();
  #tags = new Dictionary();
  #tagCounts = new Uint32Array(16);
  #embedders = new Dictionary();
  /** By embedder id. */
  #slabs: (VectorSlab | undefined)[] = [];
  /** Per-slot BM25 accumulator, kept zeroed between searches. */
  #scratch = new Float64Array(0);

  get size(): number {
    return this.#count;
  }

  /**
   * Adds or replaces `key`. Not indexed: a zero or non-finite vector, and one
   * whose length differs from the first vector of the same embedder.
   */
  upsert(
    key: string,
    text: string,
    embedding: Embedding | null,
    meta: { tags?: readonly string[]; sensitive?: boolean } = {},
  ): void {
    this.remove(key);
    const slot = this.#free.pop() ?? this.#slots++;
    this.#ensure(slot + 1);
    this.#placed.set(key, slot);
    this.#keys[slot] = key;
    this.#live[slot] = 1;
    this.#count++;
    const tokens = tokenize(text);
    const ids = this.#postings.add(slot, tokens);
    this.#docTerms.set(slot, ids);
    this.#lengths[slot] = tokens.length;
    this.#totalLength += tokens.length;
    this.#sensitive[slot] = meta.sensitive ? 1 : 0;
    const tagIds = [...new Set(meta.tags ?? [])].map((tag) =>
      this.#tags.intern(tag)
    );
    this.#tagCounts = grown(
      this.#tagCounts,
      this.#tags.size,
      (n) => new Uint32Array(n),
    );
    for (const id of tagIds) this.#tagCounts[id]++;
    this.#docTags.set(slot, tagIds);
    this.#vectorRow[slot] = -1;
    this.#embedderOf[slot] = 0;
    if (!embedding) return;
    const e = this.#embedders.intern(embedding.embedder);
    this.#embedderOf[slot] = e + 1;
    const row = quantiseRow(embedding.vector);
    if (!row) return;
    const slab = this.#slabs[e] ??= new VectorSlab(embedding.vector.length);
    if (slab.dim === embedding.vector.length) {
      this.#vectorRow[slot] = slab.add(row, slot);
    }
  }

  remove(key: string): void {
    const slot = this.#slotOf(key);
    if (slot === undefined) return;
    this.#placed.delete(key);
    this.#live[slot] = 0;
    this.#count--;
    this.#postings.remove(slot, this.#docTerms.get(slot));
    this.#docTerms.clear(slot);
    for (const id of this.#docTags.get(slot)) this.#tagCounts[id]--;
    this.#docTags.clear(slot);
    this.#totalLength -= this.#lengths[slot];
    const row = this.#vectorRow[slot];
    const slab = this.#slabs[this.#embedderOf[slot] - 1];
    if (row >= 0 && slab) {
      const moved = slab.remove(row);
      if (moved !== undefined) this.#vectorRow[moved] = row;
    }
    this.#vectorRow[slot] = -1;
    this.#embedderOf[slot] = 0;
    this.#keys[slot] = "";
    this.#free.push(slot);
  }

  /** Whether `key` is indexed (no metadata built: the write path asks per store). */
  has(key: string): boolean {
    return this.#slotOf(key) !== undefined;
  }

  meta(key: string): EntryMeta | undefined {
    const slot = this.#slotOf(key);
    return slot === undefined ? undefined : this.#metaOf(slot);
  }

  /** Live entries' metadata, in slot order. */
  *metas(): Generator<[string, EntryMeta]> {
    for (let slot = 0; slot < this.#slots; slot++) {
      if (this.#live[slot]) yield [this.#keyAt(slot), this.#metaOf(slot)];
    }
  }

  /** Keys of entries that are not sensitive and whose vector is not by `embedder`, in slot order. */
  *staleKeys(embedder: string): Generator<string> {
    // An embedder no entry has a vector of: every entry is stale, none without a vector is current.
    const known = this.#embedders.id(embedder);
    const id = known === undefined ? -1 : known + 1;
    for (let slot = 0; slot < this.#slots; slot++) {
      if (
        this.#live[slot] && !this.#sensitive[slot] &&
        this.#embedderOf[slot] !== id
      ) yield this.#keyAt(slot);
    }
  }

  /**
   * The vector the index holds for `key` (int8 × scale), with its embedder;
   * an empty vector when the embedder's vector was not indexable (zero).
   */
  embedding(key: string): Embedding | null {
    const slot = this.#slotOf(key);
    const e = slot === undefined ? 0 : this.#embedderOf[slot];
    if (slot === undefined || e === 0) return null;
    const row = this.#vectorRow[slot];
    const slab = this.#slabs[e - 1];
    return {
      embedder: this.#embedders.text(e - 1),
      vector: row >= 0 && slab ? slab.vector(row) : new Float32Array(0),
    };
  }

  /** Entries carrying `tag`. */
  tagCount(tag: string): number {
    const id = this.#tags.id(tag);
    return id === undefined ? 0 : this.#tagCounts[id];
  }

  search(query: SearchQuery): Rankings {
    const limit = Math.max(0, Math.floor(query.limit));
    return {
      lexical: this.#lexical(query, limit),
      vector: this.#vector(query, limit),
    };
  }

  #metaOf(slot: number): EntryMeta {
    const e = this.#embedderOf[slot];
    return {
      tags: [...this.#docTags.get(slot)].map((id) => this.#tags.text(id)),
      sensitive: this.#sensitive[slot] === 1,
      embedder: e === 0 ? null : this.#embedders.text(e - 1),
    };
  }

  /** The slot of live `key`: placed since the load, or still in its slot of the snapshot. */
  #slotOf(key: string): number | undefined {
    const placed = this.#placed.get(key);
    if (placed !== undefined) return placed;
    const slot = this.#baseKeys.indexOf(key);
    return slot >= 0 && this.#keys[slot] === undefined && this.#live[slot]
      ? slot
      : undefined;
  }

  /** #keyAt for TopK, made once. */
  readonly #slotKeys: SlotKeys = { keyAt: (slot) => this.#keyAt(slot) };

  #keyAt(slot: number): string {
    return this.#keys[slot] ?? this.#baseKeys.at(slot);
  }

  get #docTerms(): Arena {
    if (this.#docTermsArena) return this.#docTermsArena;
    return this.#docTermsArena = this.#postings.bySlot(this.#slots);
  }

  #ensure(slots: number): void {
    this.#live = grown(this.#live, slots, (n) => new Uint8Array(n));
    this.#lengths = grown(this.#lengths, slots, (n) => new Uint32Array(n));
    this.#sensitive = grown(this.#sensitive, slots, (n) => new Uint8Array(n));
    this.#embedderOf = grown(
      this.#embedderOf,
      slots,
      (n) => new Uint16Array(n),
    );
    const rows = this.#vectorRow.length;
    this.#vectorRow = grown(this.#vectorRow, slots, (n) => new Int32Array(n));
    this.#vectorRow.fill(-1, rows);
  }

  #lexical(query: SearchQuery, limit: number): RankedKey[] {
    const n = this.#count;
    if (limit === 0 || n === 0) return [];
    if (this.#scratch.length < this.#slots) {
      this.#scratch = new Float64Array(this.#slots * 2);
    }
    const touched: number[] = [];
    const terms = new Set(query.terms);
    for (const term of terms) this.#score(term, 1, touched);
    const respell = query.respell;
    if (respell) {
      const df = (term: string) => {
        const t = this.#postings.id(term);
        return t === undefined ? 0 : this.#postings.df(t);
      };
      for (const term of respell(df)) {
        if (!terms.has(term)) this.#score(term, RESPELLED_WEIGHT, touched);
      }
    }
    const scores = this.#scratch;
    const top = new TopK(limit, this.#slotKeys);
    for (const slot of touched) {
      top.push(slot, scores[slot]);
      scores[slot] = 0;
    }
    return top.result();
  }

  /** Adds `term`'s BM25 share × `weight` to the scratch scores of its entries. */
  #score(term: string, weight: number, touched: number[]): void {
    const t = this.#postings.id(term);
    const df = t === undefined ? 0 : this.#postings.df(t);
    if (t === undefined || df === 0) return;
    const n = this.#count;
    const scores = this.#scratch;
    const avgLength = this.#totalLength / n || 1;
    const [slots, tfs] = this.#postings.view(t);
    // Lucene's idf: always positive, so a term in most documents still counts a little.
    const idf = weight * Math.log(1 + (n - df + 0.5) / (df + 0.5));
    for (let i = 0; i < df; i++) {
      const slot = slots[i];
      const tf = tfs[i];
      if (scores[slot] === 0) touched.push(slot);
      const norm = K1 * (1 - B + B * this.#lengths[slot] / avgLength);
      scores[slot] += idf * tf * (K1 + 1) / (tf + norm);
    }
  }

  /** Only rows with positive similarity count as hits. */
  #vector(query: SearchQuery, limit: number): RankedKey[] {
    const e = query.embedder === undefined
      ? undefined
      : this.#embedders.id(query.embedder);
    const slab = e === undefined ? undefined : this.#slabs[e];
    const vector = query.vector;
    if (!slab || !vector || vector.length !== slab.dim || !limit) return [];
    const scores = slab.scores(vector);
    const top = new TopK(limit, this.#slotKeys, slab);
    for (let row = 0; row < scores.length; row++) {
      if (scores[row] > 0) top.push(row, scores[row]);
    }
    return top.result();
  }

  /** A compact copy of the index (live slots renumbered in slot order). */
  export(): IndexData {
    const slotMap = new Int32Array(this.#slots).fill(-1);
    const keys: string[] = [];
    for (let s = 0; s < this.#slots; s++) {
      if (this.#live[s]) {
        slotMap[s] = keys.length;
        keys.push(this.#keyAt(s));
      }
    }
    const n = keys.length;
    const live = (s: number) => slotMap[s] >= 0;
    const pick = <T extends Uint32Array | Uint8Array | Uint16Array>(
      from: T,
      to: T,
    ): T => {
      for (let s = 0; s < slotMap.length; s++) {
        if (live(s)) to[slotMap[s]] = from[s];
      }
      return to;
    };
    const tagMap = new Int32Array(this.#tags.size).fill(-1);
    const tags: string[] = [];
    for (let id = 0; id < this.#tags.size; id++) {
      if (this.#tagCounts[id] > 0) {
        tagMap[id] = tags.length;
        tags.push(this.#tags.text(id));
      }
    }
    const tagOffsets = new Uint32Array(n + 1);
    const tagIds: number[] = [];
    for (let s = 0; s < slotMap.length; s++) {
      if (!live(s)) continue;
      for (const id of this.#docTags.get(s)) tagIds.push(tagMap[id]);
      tagOffsets[slotMap[s] + 1] = tagIds.length;
    }
    const slabs: IndexData["slabs"] = [];
    this.#slabs.forEach((slab, embedder) => {
      if (slab && slab.count > 0) {
        slabs.push({ ...slab.data(slotMap), embedder });
      }
    });
    return {
      keys: new ArrayStrings(keys),
      lengths: pick(this.#lengths, new Uint32Array(n)),
      sensitive: pick(this.#sensitive, new Uint8Array(n)),
      embedderOf: pick(this.#embedderOf, new Uint16Array(n)),
      embedders: this.#embedders.texts(),
      tags,
      tagOffsets,
      tagIds: Uint32Array.from(tagIds),
      ...this.#postings.export(slotMap),
      slabs,
    };
  }

  /** The index `data` describes; throws when its parts disagree (a damaged snapshot). */
  static fromData(data: IndexData): SearchIndex {
    const index = new SearchIndex();
    const n = data.keys.length;
    const fail = (what: string) => {
      throw new Error(`index snapshot: ${what}`);
    };
    if (
      data.lengths.length !== n || data.sensitive.length !== n ||
      data.embedderOf.length !== n || data.tagOffsets.length !== n + 1 ||
      data.postingOffsets.length !== data.terms.length + 1 ||
      data.postingSlots.length !== data.postingTfs.length
    ) fail("section sizes disagree");
    // A write's lookups search the list (no map is built): keys as bytes must
    // be in their order; JS strings build their map at the first lookup.
    if (data.keys instanceof ByteStrings && !data.keys.unique()) {
      fail("keys out of order, or one twice");
    }
    index.#baseKeys = data.keys;
    index.#slots = n;
    index.#count = n;
    index.#ensure(Math.max(n, 16));
    index.#live.fill(1, 0, n);
    index.#lengths.set(data.lengths);
    index.#sensitive.set(data.sensitive);
    index.#embedderOf.set(data.embedderOf);
    for (let s = 0; s < n; s++) {
      index.#totalLength += data.lengths[s];
      if (data.embedderOf[s] > data.embedders.length) {
        fail("embedder out of range");
      }
    }
    index.#embedders = Dictionary.of(new ArrayStrings(data.embedders));
    index.#tags = Dictionary.of(new ArrayStrings(data.tags));
    index.#docTags = Arena.fromOffsets(data.tagOffsets, data.tagIds);
    index.#tagCounts = new Uint32Array(Math.max(data.tags.length, 16));
    // Indexed: a for-of over a typed array ran 5-8× slower here (18-74 ms at 100k).
    const tagIds = data.tagIds;
    for (let i = 0; i < tagIds.length; i++) {
      const id = tagIds[i];
      if (id >= data.tags.length) fail("tag out of range");
      index.#tagCounts[id]++;
    }
    index.#postings = Postings.fromData(data, n, fail);
    index.#docTermsArena = null;
    for (const slabData of data.slabs) {
      const slab = slabData.slab ?? VectorSlab.fromData(slabData);
      index.#slabs[slabData.embedder] = slab;
      for (let row = 0; row < slab.count; row++) {
        const slot = slab.slotOf(row);
        if (slot >= n || data.embedderOf[slot] !== slabData.embedder + 1) {
          fail("vector row out of range");
        }
        index.#vectorRow[slot] = row;
      }
    }
    return index;
  }
}
