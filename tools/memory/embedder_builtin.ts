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

function hashEmbed(text: string): Float32Array {
  const words = tokenize(text, false); // no joined forms or speaker terms: they would repeat words
  const counts = new Map<string, { weight: number; tf: number }>();
  const add = (feature: string, weight: number) => {
    const seen = counts.get(feature);
    if (seen) seen.tf++;
    else counts.set(feature, { weight, tf: 1 });
  };
  words.forEach((word, i) => {
    add(`w:${word}`, 1);
    if (i > 0) add(`b:${words[i - 1]} ${word}`, 0.7);
    const padded = `<${word}>`;
    // Many 3-grams per word: scale them so the word itself still dominates.
    const gramWeight = 0.5 / Math.sqrt(Math.max(1, padded.length - 2));
    for (let j = 0; j + 3 <= padded.length; j++) {
      add(`c:${padded.slice(j, j + 3)}`, gramWeight);
    }
  });
  const vector = new Float32Array(BUILTIN_DIMS);
  for (const [feature, { weight, tf }] of counts) {
    const h = mix(fnv1a(feature));
    const sign = (h >>> 31) === 0 ? 1 : -1;
    vector[h % BUILTIN_DIMS] += sign * weight * (1 + Math.log(tf));
  }
  return normalize(vector);
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
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
  for (const x of vector) norm += x * x;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}
