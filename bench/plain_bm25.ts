// The baseline of the dialogue benches: plain BM25 (lowercased words, no
// stop words, no stemming, k1 1.2, b 0.75) over the same turns.

const plainTokens = (text: string) =>
  text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A ranker over `turns`: a query's 10 best keys. */
export function plainBm25(
  turns: readonly { key: string; value: string }[],
): (query: string) => string[] {
  const docs = turns.map((t) => plainTokens(t.value));
  const avg = docs.reduce((n, d) => n + d.length, 0) / docs.length;
  const df = new Map<string, number>();
  for (const d of docs) {
    for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  }
  return (query) => {
    const terms = new Set(plainTokens(query));
    const scored = docs.map((d, i) => {
      let score = 0;
      for (const term of terms) {
        const tf = d.filter((w) => w === term).length;
        if (!tf) continue;
        const n = df.get(term) ?? 0;
        const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
        score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.length / avg));
      }
      return { key: turns[i].key, score };
    });
    return scored.filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1))
      .slice(0, 10).map((s) => s.key);
  };
}
