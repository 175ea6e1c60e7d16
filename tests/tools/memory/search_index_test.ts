import assert from "node:assert/strict";
import type { Embedding, StoredEntry } from "../../../tools/memory/model.ts";
import { compareKeys, fuse, TopK } from "../../../tools/memory/index_rank.ts";
import {
  indexText,
  queryTerms,
  SearchIndex,
  tokenize,
} from "../../../tools/memory/search_index.ts";

function query(
  text: string,
  limit = 10,
  vector?: { embedder: string; vector: number[] },
) {
  return {
    text,
    terms: tokenize(text),
    limit,
    embedder: vector?.embedder,
    vector: vector && Float32Array.from(vector.vector),
  };
}

function emb(vector: number[], embedder = "test:3"): Embedding {
  return { embedder, vector: Float32Array.from(vector) };
}

/** Deterministic pseudo-random numbers for property tests. */
function random(seed: number): () => number {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

Deno.test("tokenize lowercases, applies NFKC and drops stopwords", () => {
  assert.deepEqual(tokenize("The Quick BROWN fox"), ["quick", "brown", "fox"]);
  assert.deepEqual(tokenize("Ｆｕｌｌｗｉｄｔｈ ①"), ["fullwidth", "1"]);
  assert.deepEqual(tokenize("user.preferences/theme-dark"), [
    "user",
    "prefer",
    "theme",
    "dark",
    "themedark",
  ]);
  assert.deepEqual(tokenize(""), []);
  assert.deepEqual(tokenize("!!! ... ---"), []);
});

Deno.test("tokenize maps common English word forms to one token", () => {
  const same = (words: string) =>
    assert.equal(
      new Set(tokenize(words)).size,
      1,
      `${words} -> ${tokenize(words)}`,
    );
  same("store stores stored storing");
  same("run running runs");
  same("embed embeds embedded embedding embeddings");
  same("class classes");
  same("box boxes");
  same("match matches matched matching");
  same("family families");
  same("quick quickly");
  same("use uses used using");
  // Conservative: no word is cut to a stub that meets unrelated words;
  // Snowball drops only the -s that "analysis"/"analyses" vary on.
  assert.deepEqual(tokenize("string thing bus status analysis"), [
    "string",
    "thing",
    "bus",
    "status",
    "analysi",
  ]);
  assert.notEqual(tokenize("bus")[0], tokenize("bu")[0]);
  same("renovating renovation renovated");
});

Deno.test("tokenize keeps a chat question's content words only", () => {
  // Contractions leave stop-word pieces ("I've" -> i, ve): they go too.
  assert.deepEqual(tokenize("I've been painting a lot lately"), [
    "paint",
    "lot",
    "late",
  ]);
  assert.deepEqual(tokenize("What did Mia's doctor tell her about it?"), [
    "mia",
    "doctor",
    "tell",
  ]);
});

Deno.test("tokenize meets irregular forms, family words and spellings", () => {
  const same = (words: string) =>
    assert.equal(
      new Set(tokenize(words)).size,
      1,
      `${words} -> ${tokenize(words)}`,
    );
  // Snowball leaves irregular past tenses and plurals apart.
  same("go goes going went gone");
  same("run ran running");
  same("buy bought buying");
  same("win won winning");
  same("child children kid kids");
  same("mom mother mum moms");
  same("grandma grandmother");
  same("favorite favourite fave");
  same("organise organize organized");
});

Deno.test("tokenize writes numbers, ordinals and dates one way", () => {
  const same = (words: string) =>
    assert.equal(
      new Set(tokenize(words)).size,
      1,
      `${words} -> ${tokenize(words)}`,
    );
  same("3 three 3rd 03");
  same("21 21st");
  same("12 twelve 12th");
  same("September Sep Sept");
  same("January jan");
  assert.deepEqual(
    tokenize("May 8th, 2023").sort(),
    tokenize("8 may 2023").sort(),
  );
});

Deno.test("tokenize splits contractions and joins hyphenated words", () => {
  // "n't" is "not", a stop word: "won't" leaves no "won" (-> win) behind.
  assert.deepEqual(tokenize("won't can't didn't isn't"), []);
  assert.deepEqual(tokenize("Caroline's kids"), ["carolin", "child"]);
  assert.deepEqual(tokenize("Caroline’s"), ["carolin"]);
  // A hyphenated word also yields its joined form, so it meets "selfcare".
  assert.deepEqual(tokenize("self-care"), ["self", "care", "selfcar"]);
  assert.ok(tokenize("self-care").includes(tokenize("selfcare")[0]));
  assert.deepEqual(tokenize("e-mail")[2], tokenize("email")[0]);
  // Parts with digits are not joined; the builtin embedder asks for no joins.
  assert.deepEqual(tokenize("10-year"), ["10", "year"]);
  assert.deepEqual(tokenize("self-care", false), ["self", "care"]);
});

Deno.test("tokenize marks a chat turn's speaker; queryTerms asks for it", () => {
  assert.deepEqual(
    tokenize("[8 May, 2023] Caroline: I went to a support group"),
    [
      "8",
      "may",
      "2023",
      "carolin",
      "go",
      "support",
      "group",
      "@carolin",
    ],
  );
  assert.deepEqual(tokenize("key-1\nMary Ann: hi there\nBob: yes"), [
    "key",
    "1",
    "mari",
    "ann",
    "hi",
    "bob",
    "yes",
    "@mari",
    "@ann",
    "@bob",
  ]);
  assert.ok(
    tokenize("(1:56 pm on 8 May, 2023) Mel: hi").includes("@mel"),
  );
  // Not a speaker: a URL, a long clause before a colon, the embedder's view.
  assert.ok(!tokenize("https://example.com").some((t) => t.startsWith("@")));
  assert.ok(
    !tokenize("we went out for dinner last night: great").some((t) =>
      t.startsWith("@")
    ),
  );
  assert.deepEqual(tokenize("Caroline: hello", false), ["carolin", "hello"]);
  assert.deepEqual(queryTerms("When did Caroline go?"), [
    "carolin",
    "go",
    "@carolin",
    "@go",
  ]);
});

Deno.test("a turn said by the person asked about outranks one said to them", () => {
  const index = new SearchIndex();
  index.upsert("t1", "[1 May] Mel: Wow Caroline, a support group!", null);
  index.upsert(
    "t2",
    "[1 May] Caroline: I finally went to a support group meeting yesterday.",
    null,
  );
  index.upsert("t3", "[2 May] Mel: I painted a sunset.", null);
  const text = "When was Caroline at the support group?";
  const keys = (terms: string[]) =>
    index.search({ text, terms, limit: 3 }).lexical.map((hit) => hit.key);
  // Plain BM25 prefers the shorter turn that only names her...
  assert.deepEqual(keys(tokenize(text)), ["t1", "t2"]);
  // ...the speaker term puts the turn she said first.
  assert.deepEqual(keys(queryTerms(text)), ["t2", "t1"]);
});

Deno.test("tokenize keeps letters and digits of any script", () => {
  assert.deepEqual(tokenize("Привет мир"), ["привет", "мир"]);
  assert.deepEqual(tokenize("Ελληνικά 42"), ["ελληνικά", "42"]);
  // Devanagari vowel signs are marks: words must stay whole.
  assert.deepEqual(tokenize("नमस्ते दुनिया"), ["नमस्ते", "दुनिया"]);
  assert.deepEqual(tokenize("café naïve"), ["café", "naïve"]);
  assert.deepEqual(tokenize("GPT4o v2"), ["gpt4o", "v2"]);
});

Deno.test("tokenize splits CJK into characters and bigrams", () => {
  assert.deepEqual(tokenize("机器学习"), [
    "机",
    "机器",
    "器",
    "器学",
    "学",
    "学习",
    "习",
  ]);
  // Punctuation separates runs; Latin next to CJK is its own token.
  assert.deepEqual(tokenize("猫、犬"), ["猫", "犬"]);
  assert.deepEqual(tokenize("iPhone15手机"), ["iphone15", "手", "手机", "机"]);
  assert.ok(tokenize("東京タワー").includes("タワ"));
  assert.ok(tokenize("한국어").includes("한국"));
});

Deno.test("indexText leaves a sensitive entry's value out", () => {
  const entry: StoredEntry = {
    namespace: "ns",
    key: "api.token",
    value: "enc:v1:abc:def",
    tags: ["secret", "prod"],
    sensitive: true,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    embedding: null,
  };
  assert.equal(indexText(entry), "api.token\nsecret\nprod");
  assert.equal(
    indexText({ ...entry, sensitive: false, value: "hello" }),
    "api.token\nhello\nsecret\nprod",
  );
});

Deno.test("lexical ranking is BM25 with k1 1.2 and b 0.75", () => {
  const index = new SearchIndex();
  const docs: Record<string, string> = {
    a: "apple banana",
    b: "apple apple cherry date",
    c: "cherry date elderberry fig grape",
  };
  for (const [key, text] of Object.entries(docs)) {
    index.upsert(key, text, null);
  }
  const lengths = { a: 2, b: 4, c: 5 };
  const avg = 11 / 3;
  const bm25 = (tf: number, len: number, df: number) =>
    Math.log(1 + (3 - df + 0.5) / (df + 0.5)) * tf * 2.2 /
    (tf + 1.2 * (0.25 + 0.75 * len / avg));
  const { lexical } = index.search(query("apple cherry"));
  assert.deepEqual(lexical.map((h) => h.key), ["b", "a", "c"]);
  const expected = {
    a: bm25(1, lengths.a, 2),
    b: bm25(2, lengths.b, 2) + bm25(1, lengths.b, 2),
    c: bm25(1, lengths.c, 2),
  };
  for (const hit of lexical) {
    const key = hit.key;
    assert.ok(key === "a" || key === "b" || key === "c");
    assert.ok(Math.abs(hit.score - expected[key]) < 1e-12, key);
  }
});

Deno.test("rankings honour limit and break ties by key", () => {
  const index = new SearchIndex();
  for (const key of ["d", "b", "a", "c", "e"]) {
    index.upsert(key, "same words here", emb([1, 1, 0]));
  }
  const rankings = index.search(
    query("words", 3, { embedder: "test:3", vector: [1, 1, 0] }),
  );
  assert.deepEqual(rankings.lexical.map((h) => h.key), ["a", "b", "c"]);
  assert.deepEqual(rankings.vector.map((h) => h.key), ["a", "b", "c"]);
  assert.deepEqual(index.search(query("words", 0)).lexical, []);
});

Deno.test("upsert replaces and remove forgets, in both rankings", () => {
  const index = new SearchIndex();
  index.upsert("k1", "red apple", emb([1, 0, 0]));
  index.upsert("k2", "green pear", emb([0, 1, 0]));
  index.upsert("k1", "yellow banana", emb([0, 0, 1]));
  assert.equal(index.size, 2);
  assert.deepEqual(index.search(query("apple")).lexical, []);
  assert.deepEqual(
    index.search(query("banana")).lexical.map((h) => h.key),
    ["k1"],
  );
  const near = (v: number[]) =>
    index.search(query("", 10, { embedder: "test:3", vector: v })).vector
      .map((h) => h.key);
  assert.deepEqual(near([0, 0, 1]), ["k1"]);
  index.remove("k1");
  index.remove("missing");
  assert.equal(index.size, 1);
  assert.deepEqual(index.search(query("banana")).lexical, []);
  assert.deepEqual(near([0, 0, 1]), []);
  assert.deepEqual(near([0, 1, 0]), ["k2"]);
  index.upsert("k2", "green pear", null);
  assert.deepEqual(near([0, 1, 0]), []);
});

Deno.test("vector ranking is cosine similarity within one embedder", () => {
  const index = new SearchIndex();
  index.upsert("x", "", emb([3, 0, 0]));
  index.upsert("xy", "", emb([1, 1, 0]));
  index.upsert("y", "", emb([0, 2, 0]));
  index.upsert("neg", "", emb([-1, 0, 0]));
  index.upsert("other", "", emb([1, 0, 0], "other:3"));
  index.upsert("wide", "", emb([1, 0, 0, 0], "test:3")); // wrong length: not indexed
  const { vector } = index.search(
    query("", 10, { embedder: "test:3", vector: [2, 0.5, 0] }),
  );
  assert.deepEqual(vector.map((h) => h.key), ["x", "xy", "y"]);
  const cos = 2 / Math.sqrt(4.25);
  // The query is scanned as int16 (rows as the int8 the store keeps): 1e-4 close.
  assert.ok(Math.abs(vector[0].score - cos) < 1e-4);
  // No embedder, an unknown one, a wrong length or a zero vector: no hits.
  assert.deepEqual(index.search(query("", 10)).vector, []);
  for (
    const q of [
      { embedder: "nope", vector: [1, 0, 0] },
      { embedder: "test:3", vector: [1, 0] },
      { embedder: "test:3", vector: [0, 0, 0] },
    ]
  ) {
    assert.deepEqual(index.search(query("", 10, q)).vector, []);
  }
});

Deno.test("incremental index equals one built from scratch", () => {
  const next = random(7);
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
  const text = () =>
    Array.from(
      { length: 1 + Math.floor(next() * 12) },
      () => words[Math.floor(next() * next() * words.length)],
    ).join(" ");
  const vec = () => Array.from({ length: 20 }, () => next() - 0.5);
  const live = new Map<string, { text: string; vector: number[] }>();
  const index = new SearchIndex();
  for (let step = 0; step < 3000; step++) {
    const key = `k${Math.floor(next() * 300)}`;
    if (next() < 0.3) {
      index.remove(key);
      live.delete(key);
    } else {
      const doc = { text: text(), vector: vec() };
      index.upsert(key, doc.text, emb(doc.vector, "e"));
      live.set(key, doc);
    }
  }
  const fresh = new SearchIndex();
  for (const [key, doc] of live) {
    fresh.upsert(key, doc.text, emb(doc.vector, "e"));
  }
  assert.equal(index.size, live.size);
  for (let i = 0; i < 30; i++) {
    const q = query(text(), 25, { embedder: "e", vector: vec() });
    assert.deepEqual(index.search(q), fresh.search(q));
  }
});

/** The int8 form the store keeps (kv_records.ts quantise), as numbers. */
function int8(v: number[]): number[] {
  const scale = Math.max(...v.map(Math.abs)) / 127;
  return v.map((x) => Math.round(x / scale));
}

Deno.test("the vector kernel matches a plain cosine computation", () => {
  const next = random(11);
  const index = new SearchIndex();
  const vectors = new Map<string, number[]>();
  // 37 dimensions: not a multiple of the kernel's 16-byte step.
  for (let i = 0; i < 500; i++) {
    const v = Array.from({ length: 37 }, () => next() - 0.5);
    vectors.set(`k${i}`, v);
    index.upsert(`k${i}`, "", emb(v, "e"));
  }
  const q = Array.from({ length: 37 }, () => next() - 0.5);
  // The kernel takes the query as int16 (its largest component at 32767).
  const max = Math.max(...q.map(Math.abs));
  const q16 = q.map((x) => Math.round(x / max * 32767));
  const norm = (v: number[]) => Math.hypot(...v);
  const cosine = (a: number[], b: number[]) =>
    a.reduce((s, x, i) => s + x * b[i], 0) / norm(a) / norm(b);
  const expected = [...vectors].map(([key, v]) => ({
    key,
    score: cosine(int8(v), q16),
  })).filter((h) => h.score > 0).sort((a, b) =>
    b.score - a.score || (a.key < b.key ? -1 : 1)
  ).slice(0, 50);
  const { vector } = index.search(
    query("", 50, { embedder: "e", vector: q }),
  );
  assert.deepEqual(vector.map((h) => h.key), expected.map((h) => h.key));
  for (const [i, hit] of vector.entries()) {
    assert.ok(Math.abs(hit.score - expected[i].score) < 1e-6);
    // And within int8's error of the exact Float32 cosine.
    const exact = cosine(vectors.get(hit.key) ?? [], q);
    assert.ok(Math.abs(hit.score - exact) < 0.02);
  }
});

Deno.test("fuse is reciprocal rank fusion", () => {
  const fused = fuse({
    lexical: [{ key: "a", score: 9 }, { key: "b", score: 5 }],
    vector: [{ key: "b", score: 0.9 }, { key: "c", score: 0.8 }],
  }, 10);
  assert.deepEqual(fused, [
    {
      key: "b",
      score: 1 / 62 + 1 / 61,
      lexical_rank: 2,
      vector_rank: 1,
    },
    { key: "a", score: 1 / 61, lexical_rank: 1 },
    { key: "c", score: 1 / 62, vector_rank: 2 },
  ]);
  // Equal scores fall back to key order; limit and k apply.
  const tied = fuse(
    {
      lexical: [{ key: "z", score: 1 }],
      vector: [{ key: "y", score: 1 }],
    },
    1,
    { k: 0 },
  );
  assert.deepEqual(tied, [{ key: "y", score: 1, vector_rank: 1 }]);
  assert.deepEqual(fuse({ lexical: [], vector: [] }, 5), []);
  // A lighter vector ranking: lexical rank 2 now beats vector rank 1.
  const weighted = fuse(
    {
      lexical: [{ key: "a", score: 9 }, { key: "b", score: 5 }],
      vector: [{ key: "c", score: 0.9 }],
    },
    10,
    { vectorWeight: 0.5 },
  );
  assert.deepEqual(weighted.map((hit) => hit.key), ["a", "b", "c"]);
  assert.equal(weighted[2].score, 0.5 / 61);
});

Deno.test("TopK keeps the limit best by score, then key, with many ties", () => {
  let seed = 17;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (
    const [count, limit, levels] of [[1000, 10, 3], [500, 50, 1000], [
      40,
      60,
      2,
    ], [300, 0, 5]]
  ) {
    const keys = Array.from(
      { length: count },
      (_, i) => `key-${(i * 7919) % count}`,
    );
    // Few distinct scores: most candidates tie with the kept worst.
    const scores = keys.map(() => Math.floor(random() * levels) / levels);
    const slotKeys = { keyAt: (slot: number) => keys[slot] };
    const top = new TopK(limit, slotKeys);
    for (let id = 0; id < count; id++) top.push(id, scores[id]);
    const expected = keys
      .map((key, id) => ({ key, score: scores[id] }))
      .sort((a, b) => b.score - a.score || compareKeys(a.key, b.key))
      .slice(0, limit);
    assert.deepEqual(top.result(), expected);
    // Rows that map to slots (a vector slab's) rank the same by their slots' keys.
    const slotOfRow = keys.map((_, id) => count - 1 - id);
    const byRow = new TopK(limit, slotKeys, {
      slotOf: (row) => slotOfRow[row],
    });
    for (let row = 0; row < count; row++) {
      byRow.push(row, scores[slotOfRow[row]]);
    }
    assert.deepEqual(byRow.result(), expected);
  }
});
