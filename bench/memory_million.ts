// The 1M-entry search run of issue 18, in process: the search bench's note
// generator (bench_lib.ts fillerEntry) and builtin embeddings go straight into
// one SearchIndex (no store: writing 1M entries through KV would take hours on
// the bench machine), then 3-word queries are timed on SearchIndex.search
// (BM25 + int8 vector scan + top-k; the part that grows with the namespace),
// and the index's snapshot is encoded and loaded back from its bytes.
//
//   deno run -A bench/memory_million.ts            (or BENCH_MEMORY_MILLION=1 with the search bench)

import { BuiltinEmbedder } from "../tools/memory/embedder_builtin.ts";
import {
  indexText,
  SearchIndex,
  tokenize,
} from "../tools/memory/search_index.ts";
import { decodeIndex, encodeIndex } from "../tools/memory/index_snapshot.ts";
import {
  fillerEntry,
  ms,
  percentile,
  queryText,
  seeded,
  unembedded,
} from "./bench_lib.ts";

const ENTRIES = Number(Deno.env.get("BENCH_MEMORY_MILLION_SIZE") ?? 1_000_000);
const QUERIES = 200;
const WARMUP = 20;

export async function millionRun(
  queries: readonly string[],
): Promise<Record<string, string>[]> {
  const embedder = new BuiltinEmbedder();
  const index = new SearchIndex();
  const random = seeded(42);
  const now = new Date().toISOString();
  let started = performance.now();
  for (let i = 0; i < ENTRIES; i++) {
    const input = fillerEntry(random, i);
    const entry = unembedded(input, now);
    const text = indexText(entry);
    const [vector] = await embedder.embed([text]);
    index.upsert(entry.key, text, { embedder: embedder.id, vector }, {
      tags: entry.tags,
    });
  }
  const buildS = (performance.now() - started) / 1000;
  const rssBuilt = Deno.memoryUsage().rss;
  const prepared = await Promise.all(queries.map(async (text) => ({
    text,
    terms: tokenize(text),
    limit: 10,
    embedder: embedder.id,
    vector: (await embedder.embed([text]))[0],
  })));
  for (const q of prepared.slice(0, WARMUP)) index.search(q);
  const samples: number[] = [];
  let hits = 0;
  for (const q of prepared.slice(WARMUP)) {
    const t = performance.now();
    const r = index.search(q);
    samples.push(performance.now() - t);
    hits += r.lexical.length + r.vector.length;
  }
  started = performance.now();
  const data = index.export();
  const blob = encodeIndex(data);
  const saveMs = performance.now() - started;
  const rowBytes = data.slabs.reduce((sum, s) => sum + s.rows.byteLength, 0);
  started = performance.now();
  const decoded = decodeIndex(blob);
  decoded.slabs.forEach((slab, k) => slab.rows.set(data.slabs[k].rows));
  const copy = SearchIndex.fromData(decoded);
  const loadMs = performance.now() - started;
  return [{
    entries: String(index.size),
    "build s (tokenise + embed + index)": buildS.toFixed(0),
    "RSS after build MiB": (rssBuilt / 1048576).toFixed(0),
    "search p50 ms": ms(percentile(samples, 50)),
    "search p95 ms": ms(percentile(samples, 95)),
    "hits/query": (hits / samples.length).toFixed(1),
    "snapshot MiB (index + vector rows)": `${
      (blob.length / 1048576).toFixed(0)
    } + ${(rowBytes / 1048576).toFixed(0)}`,
    "encode ms": saveMs.toFixed(0),
    "decode + load ms": `${loadMs.toFixed(0)} (${copy.size} entries)`,
  }];
}

if (import.meta.main) {
  const random = seeded(9001);
  const queries = Array.from(
    { length: WARMUP + QUERIES },
    () => queryText(random, 3),
  );
  console.table(await millionRun(queries));
}
