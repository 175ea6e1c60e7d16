// The built-in embedder: feature hashing of words, word pairs and character
// trigrams, offline and deterministic; needs no download.

import type { Embedder } from "./model.ts";
import { tokenize } from "./search_index.ts";

const BUILTIN_DIMS = 256;

/**
 * Feature hashing (the "hashing trick"): word unigrams, word bigrams and the
 * character 3-grams of each word are hashed (FNV-1a, then a murmur3 finaliser)
 * into 256 signed buckets, weighted 1 + ln(tf), and L2-normalised.
 *
 * Be honest about what this is: lexical similarity with some tolerance for
 * morphology and typos (shared 3-grams), not semantics. "car" and "automobile"
 * are unrelated to it. It exists so hybrid search works offline and
 * deterministically; configure openai or ollama for real semantic recall.
 * Changing anything here (or `tokenize`) changes vectors: bump the id's version
 * so stored vectors are recomputed rather than compared with new ones.
 */
export class BuiltinEmbedder implements Embedder {
  readonly id = `builtin:hash-v3:${BUILTIN_DIMS}`;
  // Its vectors mostly restate lexical overlap, so weak vector hits only add
  // noise to the fusion: measured by bench/memory_quality_bench.ts, where
  // weight 1 with any similarity scored recall@5 0.79 against lexical's 0.88;
  // on chat turns (bench/memory_dialogue_bench.ts) similarities below 0.45
  // are mostly shared filler words, and admitting them cost 0.03 recall@5.
  readonly fusion = { weight: 0.5, minSimilarity: 0.45 };

  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map(hashEmbed));
  }
}

// Features are hashed straight from the words, without building their strings
// (the cost of an embedding was mostly those strings and a Map keyed by them).
// The vector is the same as hashing the strings `w:<word>`, `b:<prev> <word>`
// and `c:<3 chars of <word>>`: features are counted per exact feature (equal
// hashes are compared by their characters) and added in first-seen order.
const WORD = 0;
const PAIR = 1;
const GRAM = 2;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const W_STATE = fnvText(FNV_OFFSET, "w:");
const B_STATE = fnvText(FNV_OFFSET, "b:");
const C_STATE = fnvText(FNV_OFFSET, "c:");
const OPEN = 0x3c; // "<"
const CLOSE = 0x3e; // ">"
const SPACE = 0x20;

/** Per-call feature tables, reused (grown on demand) across calls. */
let capacity = 0;
let kinds = new Uint8Array(0);
let wordOf = new Int32Array(0);
let offsetOf = new Int32Array(0);
let hashes = new Uint32Array(0);
/** Each feature's mixed hash: its table slot and its bucket and sign. */
let mixed = new Uint32Array(0);
let weights = new Float64Array(0);
let tfs = new Int32Array(0);
let table = new Int32Array(0);
let mask = 0;
let count = 0;
/** The words of the call being embedded. */
let words: string[] = [];

function reserve(features: number): void {
  if (features <= capacity) return;
  capacity = Math.max(features, capacity * 2, 256);
  kinds = new Uint8Array(capacity);
  wordOf = new Int32Array(capacity);
  offsetOf = new Int32Array(capacity);
  hashes = new Uint32Array(capacity);
  mixed = new Uint32Array(capacity);
  weights = new Float64Array(capacity);
  tfs = new Int32Array(capacity);
  let size = 1;
  while (size < capacity * 2) size *= 2;
  table = new Int32Array(size);
}

function hashEmbed(text: string): Float32Array {
  words = tokenize(text, false); // no joined forms or speaker terms: they would repeat words
  let bound = 0;
  for (const word of words) bound += word.length + 2;
  reserve(bound);
  mask = table.length - 1;
  table.fill(-1);
  count = 0;
  /** `b:<previous word> `, hashed: each word's pair starts from it. */
  let pairState = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    add(fnvText(W_STATE, word), WORD, i, 0, 1);
    if (i > 0) add(fnvText(pairState, word), PAIR, i, 0, 0.7);
    pairState = fnvChar(fnvText(B_STATE, word), SPACE);
    // Many 3-grams per word: scale them so the word itself still dominates.
    const gramWeight = 0.5 / Math.sqrt(Math.max(1, word.length));
    // A sliding window over the padded word `<word>`.
    let a = OPEN;
    let b = paddedAt(word, 1);
    for (let j = 0; j + 3 <= word.length + 2; j++) {
      const c = paddedAt(word, j + 2);
      add(fnvChar(fnvChar(fnvChar(C_STATE, a), b), c), GRAM, i, j, gramWeight);
      a = b;
      b = c;
    }
  }
  const vector = new Float32Array(BUILTIN_DIMS);
  for (let f = 0; f < count; f++) {
    const h = mixed[f];
    const sign = (h >>> 31) === 0 ? 1 : -1;
    // 1 + ln(1) is 1: the log is taken only for repeated features.
    const tf = tfs[f];
    vector[h % BUILTIN_DIMS] += sign * weights[f] *
      (tf === 1 ? 1 : 1 + Math.log(tf));
  }
  words = [];
  return normalize(vector);
}

/** The character at `p` of the padded word `<word>`. */
function paddedAt(word: string, p: number): number {
  return p === 0
    ? OPEN
    : p === word.length + 1
    ? CLOSE
    : word.charCodeAt(p - 1);
}

/** Whether feature `f` is the feature (`kind`, word `i`, offset `j`): equal hashes, same characters. */
function same(f: number, kind: number, i: number, j: number): boolean {
  if (kinds[f] !== kind) return false;
  const a = wordOf[f];
  if (kind === WORD) return words[a] === words[i];
  if (kind === PAIR) {
    return words[a] === words[i] && words[a - 1] === words[i - 1];
  }
  const wa = words[a];
  const wi = words[i];
  const ja = offsetOf[f];
  return paddedAt(wa, ja) === paddedAt(wi, j) &&
    paddedAt(wa, ja + 1) === paddedAt(wi, j + 1) &&
    paddedAt(wa, ja + 2) === paddedAt(wi, j + 2);
}

/** Counts one occurrence of a feature: a new entry in first-seen order, or tf + 1. */
function add(h: number, kind: number, i: number, j: number, w: number): void {
  h >>>= 0;
  const m = mix(h);
  let slot = m & mask;
  for (;;) {
    const f = table[slot];
    if (f === -1) break;
    if (hashes[f] === h && same(f, kind, i, j)) {
      tfs[f]++;
      return;
    }
    slot = (slot + 1) & mask;
  }
  table[slot] = count;
  kinds[count] = kind;
  wordOf[count] = i;
  offsetOf[count] = j;
  hashes[count] = h;
  mixed[count] = m;
  weights[count] = w;
  tfs[count] = 1;
  count++;
}

function fnvChar(h: number, code: number): number {
  return Math.imul(h ^ code, FNV_PRIME);
}

/** FNV-1a over UTF-16 code units, continuing from state `h` (not yet made unsigned). */
function fnvText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  }
  return h;
}

/** murmur3's fmix32: FNV's low bits are weak, and the bucket is taken from them. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Scales to unit length in place; an all-zero vector (no words) stays zero. */
export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}
