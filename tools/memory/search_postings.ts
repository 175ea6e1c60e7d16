// The inverted index of a SearchIndex: per term, the slots of the entries
// holding it and its frequency in each. Apart from search_index.ts, which
// owns the slots, their metadata and vectors, and ranks with these postings.

import {
  Arena,
  ArrayStrings,
  Dictionary,
  grown,
  type StringList,
} from "./index_arrays.ts";

/** Term frequencies are kept as uint16; BM25 is flat long before that. */
const MAX_TF = 65535;

/** The postings as a snapshot holds them (part of IndexData). */
export interface PostingsData {
  terms: StringList;
  /** terms + 1 offsets into postingSlots/postingTfs. */
  postingOffsets: Uint32Array;
  postingSlots: Uint32Array;
  postingTfs: Uint16Array;
  /**
   * The reader checks that every posting slot is below the entry count
   * itself (an index image's pass over the file): fromData skips that scan.
   */
  slotsChecked?: boolean;
}

export class Postings {
  #terms = new Dictionary();
  /** A term's own postings once changed after a load; before that, its range of #base. */
  #postSlots: (Uint32Array | undefined)[] = [];
  #postTfs: (Uint16Array | undefined)[] = [];
  /** The loaded snapshot's postings, one array for all terms (no object per term). */
  #base: { offsets: Uint32Array; slots: Uint32Array; tfs: Uint16Array } | null =
    null;
  #df = new Uint32Array(16);

  /** The id of `term`, when some entry held it. */
  id(term: string): number | undefined {
    return this.#terms.id(term);
  }

  /** How many entries hold term `t`. */
  df(t: number): number {
    return this.#df[t];
  }

  /** Adds the entry in `slot` with its `tokens`; returns its distinct term ids. */
  add(slot: number, tokens: readonly string[]): number[] {
    const ids: number[] = [];
    for (const term of tokens) {
      const known = this.#terms.size;
      const t = this.#terms.intern(term);
      if (t === known) {
        this.#postSlots[t] = new Uint32Array(2);
        this.#postTfs[t] = new Uint16Array(2);
        this.#df = grown(this.#df, t + 1, (n) => new Uint32Array(n));
      }
      const size = this.#df[t];
      let slots = this.#postSlots[t];
      let tfs = this.#postTfs[t];
      // A term's own arrays once it changed (no tuple per token); else copied out of the snapshot.
      if (!slots || !tfs) [slots, tfs] = this.#own(t);
      // This document's postings are appended last, so a repeat is the last one.
      if (size > 0 && slots[size - 1] === slot) {
        if (tfs[size - 1] < MAX_TF) tfs[size - 1]++;
        continue;
      }
      if (size === slots.length) {
        slots = this.#postSlots[t] = grown(
          slots,
          size + 1,
          (n) => new Uint32Array(n),
        );
        tfs = this.#postTfs[t] = grown(
          tfs,
          size + 1,
          (n) => new Uint16Array(n),
        );
      }
      slots[size] = slot;
      tfs[size] = 1;
      this.#df[t] = size + 1;
      ids.push(t);
    }
    return ids;
  }

  /** Takes the entry in `slot` out of the postings of its terms `ids`. */
  remove(slot: number, ids: Uint32Array): void {
    for (const t of ids) {
      const last = this.#df[t] - 1;
      let slots = this.#postSlots[t];
      let tfs = this.#postTfs[t];
      if (!slots || !tfs) [slots, tfs] = this.#own(t);
      // Native search: a common term's postings are long, and the entry's is anywhere in them.
      const i = slots.lastIndexOf(slot, last);
      slots[i] = slots[last];
      tfs[i] = tfs[last];
      this.#df[t] = last;
    }
  }

  /** Each of `slots` slots' distinct term ids, derived from the postings. */
  bySlot(slots: number): Arena {
    // Counting sort of the postings by slot.
    const offsets = new Uint32Array(slots + 1);
    for (let t = 0; t < this.#terms.size; t++) {
      const [posting] = this.view(t);
      for (let i = 0; i < this.#df[t]; i++) offsets[posting[i] + 1]++;
    }
    for (let s = 0; s < slots; s++) offsets[s + 1] += offsets[s];
    const fill = offsets.slice(0, slots);
    const ids = new Uint32Array(offsets[slots]);
    for (let t = 0; t < this.#terms.size; t++) {
      const [posting] = this.view(t);
      for (let i = 0; i < this.#df[t]; i++) ids[fill[posting[i]]++] = t;
    }
    return Arena.fromOffsets(offsets, ids);
  }

  /** A term's postings (slots, tfs; the first df[t] count), without copying. */
  view(t: number): [Uint32Array, Uint16Array] {
    const slots = this.#postSlots[t];
    const tfs = this.#postTfs[t];
    if (slots && tfs) return [slots, tfs];
    const base = this.#base;
    if (!base) throw new Error(`search index: term ${t} has no postings`);
    const [from, to] = [base.offsets[t], base.offsets[t + 1]];
    return [base.slots.subarray(from, to), base.tfs.subarray(from, to)];
  }

  /** A term's postings as arrays of its own, copied out of #base on its first change. */
  #own(t: number): [Uint32Array, Uint16Array] {
    const slots = this.#postSlots[t];
    const tfs = this.#postTfs[t];
    if (slots && tfs) return [slots, tfs];
    const [baseSlots, baseTfs] = this.view(t);
    const own: [Uint32Array, Uint16Array] = [
      new Uint32Array(Math.max(2, baseSlots.length)),
      new Uint16Array(Math.max(2, baseSlots.length)),
    ];
    own[0].set(baseSlots);
    own[1].set(baseTfs);
    this.#postSlots[t] = own[0];
    this.#postTfs[t] = own[1];
    return own;
  }

  /** The postings of the terms some entry holds, slots renumbered by `slotMap`. */
  export(slotMap: Int32Array): PostingsData {
    const terms: string[] = [];
    let postings = 0;
    for (let t = 0; t < this.#terms.size; t++) postings += this.#df[t];
    const postingSlots = new Uint32Array(postings);
    const postingTfs = new Uint16Array(postings);
    const offsets: number[] = [0];
    let at = 0;
    for (let t = 0; t < this.#terms.size; t++) {
      const df = this.#df[t];
      if (df === 0) continue;
      terms.push(this.#terms.text(t));
      const [slots, tfs] = this.view(t);
      for (let i = 0; i < df; i++) postingSlots[at + i] = slotMap[slots[i]];
      postingTfs.set(tfs.subarray(0, df), at);
      at += df;
      offsets.push(at);
    }
    return {
      terms: new ArrayStrings(terms),
      postingOffsets: Uint32Array.from(offsets),
      postingSlots,
      postingTfs,
    };
  }

  /** The postings `data` describes over `n` slots; `fail` when they disagree. */
  static fromData(
    data: PostingsData,
    n: number,
    fail: (what: string) => never,
  ): Postings {
    const postings = new Postings();
    postings.#terms = Dictionary.of(data.terms);
    postings.#df = new Uint32Array(Math.max(data.terms.length, 16));
    const offsets = data.postingOffsets;
    for (let t = 0; t < data.terms.length; t++) {
      const [from, to] = [offsets[t], offsets[t + 1]];
      if (to < from || to > data.postingSlots.length) {
        fail("postings out of range");
      }
      postings.#df[t] = to - from;
    }
    postings.#base = {
      offsets,
      slots: data.postingSlots,
      tfs: data.postingTfs,
    };
    postings.#postSlots.length = data.terms.length;
    postings.#postTfs.length = data.terms.length;
    if (data.slotsChecked) return postings;
    // Indexed: a for-of over millions of slots is several times slower in V8.
    const slots = data.postingSlots;
    let max = 0;
    for (let i = 0; i < slots.length; i++) if (slots[i] > max) max = slots[i];
    if (slots.length > 0 && max >= n) fail("posting slot out of range");
    return postings;
  }
}
