// Ranking short documents (tool names and descriptions) against a query
// without any model or API key: BM25 over word stems, blended with the cosine
// of hashed character-trigram vectors (catches "memorise" ~ "memory").

const DIMENSIONS = 512;
const K1 = 1.2;
const B = 0.75;
/** Weight of the trigram cosine next to the normalised BM25 score. */
const VECTOR_WEIGHT = 0.35;

export interface RankedDocument<T> {
  item: T;
  score: number;
}

interface Indexed<T> {
  item: T;
  terms: Map<string, number>;
  length: number;
  vector: Float32Array;
}

/** Lower-case words, split on punctuation, `snake_case`, `kebab-case` and `camelCase`, lightly stemmed. */
export function termsOf(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1)
    .map(stem);
}

/** Strips common English endings so "stores", "stored", "storing" meet "store". */
function stem(word: string): string {
  for (const suffix of ["ies", "ing", "ed", "es", "s", "e", "y"]) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) {
      return word.slice(0, -suffix.length);
    }
  }
  return word;
}

function vectorOf(terms: readonly string[]): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  for (const term of terms) {
    const padded = ` ${term} `;
    for (let i = 0; i + 3 <= padded.length; i++) {
      vector[fnv(padded.slice(i, i + 3)) % DIMENSIONS] += 1;
    }
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < DIMENSIONS; i++) vector[i] /= norm;
  return vector;
}

function fnv(value: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** An index built once per document set; `rank` is cheap per query. */
export class TextRanker<T> {
  readonly #docs: Indexed<T>[];
  readonly #documentFrequency = new Map<string, number>();
  readonly #averageLength: number;

  constructor(items: Iterable<T>, textOf: (item: T) => string) {
    this.#docs = [...items].map((item) => {
      const words = termsOf(textOf(item));
      const terms = new Map<string, number>();
      for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
      return { item, terms, length: words.length, vector: vectorOf(words) };
    });
    for (const doc of this.#docs) {
      for (const term of doc.terms.keys()) {
        this.#documentFrequency.set(
          term,
          (this.#documentFrequency.get(term) ?? 0) + 1,
        );
      }
    }
    const total = this.#docs.reduce((sum, doc) => sum + doc.length, 0);
    this.#averageLength = total / Math.max(1, this.#docs.length);
  }

  /** The best `limit` documents, best first; documents sharing nothing with the query are left out. */
  rank(query: string, limit: number): RankedDocument<T>[] {
    const words = [...new Set(termsOf(query))];
    if (words.length === 0) return [];
    const queryVector = vectorOf(words);
    const count = this.#docs.length;
    const lexical = this.#docs.map((doc) => {
      let score = 0;
      for (const word of words) {
        const frequency = doc.terms.get(word) ?? 0;
        if (frequency === 0) continue;
        const df = this.#documentFrequency.get(word) ?? 0;
        const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
        score += idf * (frequency * (K1 + 1)) /
          (frequency +
            K1 * (1 - B + B * doc.length / (this.#averageLength || 1)));
      }
      return score;
    });
    const best = Math.max(0, ...lexical) || 1;
    return this.#docs
      .map((doc, index) => {
        let cosine = 0;
        for (let i = 0; i < DIMENSIONS; i++) {
          cosine += doc.vector[i] * queryVector[i];
        }
        return {
          item: doc.item,
          score: lexical[index] / best + VECTOR_WEIGHT * cosine,
          lexical: lexical[index],
          cosine,
        };
      })
      .filter((scored) => scored.lexical > 0 || scored.cosine > 0.25)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ item, score }) => ({
        item,
        score: Math.round(score * 1000) / 1000,
      }));
  }
}
