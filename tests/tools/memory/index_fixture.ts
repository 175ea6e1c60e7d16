// Shared by the persisted-index tests: seeded entries with builtin
// embeddings, queries, and opening a KvBackend that reports how it loaded.

import { createLogger } from "../../../platform/log.ts";
import type { Store } from "../../../platform/store/mod.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import type {
  Rankings,
  SearchQuery,
  StoredEntry,
} from "../../../tools/memory/model.ts";
import { indexText, tokenize } from "../../../tools/memory/search_index.ts";

export const NS = "notes";
const embedder = new BuiltinEmbedder();
const WORDS = (
  "river stone garden window lamp coffee paper music winter harbor ticket " +
  "orange violin planet silver rocket meadow candle bridge forest castle " +
  "engine pepper island marble feather thunder velvet glacier lantern"
).split(" ");

/** Deterministic pseudo-random numbers. */
export function random(seed: number): () => number {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

function words(next: () => number, n: number): string {
  return Array.from(
    { length: n },
    () => WORDS[Math.floor(next() * next() * WORDS.length)],
  ).join(" ");
}

/** Entry `i` of a seeded set, embedded by the builtin embedder as the service does. */
export async function entry(
  i: number,
  version = 0,
  namespace = NS,
): Promise<StoredEntry> {
  const next = random(i * 7919 + version * 104729 + 1);
  const now = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  const stored: StoredEntry = {
    namespace,
    key: `note-${i}`,
    value: `${words(next, 4 + Math.floor(next() * 12))} v${version}`,
    tags: next() < 0.5 ? [`tag-${i % 5}`] : [],
    sensitive: false,
    created_at: now,
    updated_at: now,
    embedding: null,
  };
  const [vector] = await embedder.embed([indexText(stored)]);
  return { ...stored, embedding: { embedder: embedder.id, vector } };
}

export async function queries(count = 20): Promise<SearchQuery[]> {
  const next = random(99);
  const out: SearchQuery[] = [];
  for (let i = 0; i < count; i++) {
    const text = words(next, 2);
    const [vector] = await embedder.embed([text]);
    out.push({
      text,
      terms: tokenize(text),
      limit: 15,
      embedder: embedder.id,
      vector,
    });
  }
  return out;
}

export interface Loaded {
  namespaces: number;
  entries: number;
  loaded: number;
  rebuilt: number;
  replayed: number;
  /** Namespaces read from an index image. */
  images: number;
}

/** Opens a KvBackend on `store` and returns its memory_index_loaded report and log lines. */
export async function openReporting(
  store: Store,
  options: { images?: string } = {},
): Promise<{ backend: KvBackend; report: Loaded; logs: string[] }> {
  const logs: string[] = [];
  const backend = await KvBackend.open(store, {
    logger: createLogger({ sink: (line) => logs.push(line) }),
    images: options.images,
  });
  const line = logs.find((l) => l.includes('"memory_index_loaded"'));
  if (!line) throw new Error("no memory_index_loaded line");
  const report: Loaded = JSON.parse(line);
  return { backend, report, logs };
}

export async function rankings(
  backend: KvBackend,
  qs: SearchQuery[],
): Promise<Rankings[]> {
  return await Promise.all(qs.map((q) => backend.search(NS, q)));
}
