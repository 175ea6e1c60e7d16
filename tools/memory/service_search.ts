// Hybrid search for the memory service: embeds the query (cached), ranks one
// or several namespaces and fuses their lexical and vector rankings.

import type { Logger } from "../../platform/log.ts";
import { messageOf } from "../../platform/errors.ts";
import { getEntries, type MemoryBackend } from "./backends/port.ts";
import type { Embedder } from "./model.ts";
import type { MemoryEntry, SearchQuery, StoredEntry } from "./model.ts";
import { queryTerms } from "./search_index.ts";
import { respeller } from "./search_respell.ts";
import { fuse } from "./index_rank.ts";
import type { MemoryStats } from "./stats.ts";

export interface SearchHit {
  namespace: string;
  key: string;
  value: string;
  tags: string[];
  score: number;
  /** Which rankings found it. */
  matched: ("lexical" | "vector")[];
}

export interface SearchOutcome {
  hits: SearchHit[];
  /** `hybrid` when vectors were compared, `lexical` when the embedder was unavailable. */
  mode: "hybrid" | "lexical";
  note?: string;
}

export interface HybridSearchOptions {
  backend: MemoryBackend;
  embedder: Embedder;
  stats: MemoryStats;
  log: Logger;
  /** The entry as tools show it (sensitive values decrypted). */
  open: (entry: StoredEntry) => Promise<MemoryEntry>;
}

/** Searches namespaces the caller was already checked for. */
export class HybridSearch {
  readonly #backend: MemoryBackend;
  readonly #embedder: Embedder;
  readonly #stats: MemoryStats;
  readonly #log: Logger;
  readonly #open: (entry: StoredEntry) => Promise<MemoryEntry>;
  readonly #queryVectors = new Map<string, Float32Array>();

  constructor(options: HybridSearchOptions) {
    this.#backend = options.backend;
    this.#embedder = options.embedder;
    this.#stats = options.stats;
    this.#log = options.log;
    this.#open = options.open;
  }

  async one(
    namespace: string,
    query: string,
    limit: number,
  ): Promise<SearchOutcome> {
    const started = performance.now();
    try {
      const vector = await this.#queryVector(query);
      const hits = await this.#searchOne(
        namespace,
        query,
        respeller(query),
        vector.value,
        limit,
      );
      return { hits, ...this.#mode(vector) };
    } finally {
      this.#stats.observeSearch(performance.now() - started);
    }
  }

  /** `namespaces` without duplicates; hits of all, best first. */
  async many(
    namespaces: string[],
    query: string,
    limit: number,
  ): Promise<SearchOutcome & { by_namespace: Record<string, number> }> {
    const started = performance.now();
    try {
      const vector = await this.#queryVector(query);
      const respell = respeller(query);
      const perNamespace = await Promise.all(
        namespaces.map((namespace) =>
          this.#searchOne(namespace, query, respell, vector.value, limit)
        ),
      );
      const by_namespace: Record<string, number> = {};
      namespaces.forEach((namespace, i) =>
        by_namespace[namespace] = perNamespace[i].length
      );
      const hits = perNamespace.flat().sort((a, b) =>
        b.score - a.score || compare(a, b)
      ).slice(0, limit);
      return { hits, by_namespace, ...this.#mode(vector) };
    } finally {
      this.#stats.observeSearch(performance.now() - started);
    }
  }

  #mode(
    vector: { value?: Float32Array; error?: string },
  ): Pick<SearchOutcome, "mode" | "note"> {
    return vector.value ? { mode: "hybrid" } : {
      mode: "lexical",
      note:
        `Vector search unavailable (${vector.error}); lexical ranking only.`,
    };
  }

  async #searchOne(
    namespace: string,
    query: string,
    respell: SearchQuery["respell"],
    vector: Float32Array | undefined,
    limit: number,
  ): Promise<SearchHit[]> {
    const depth = Math.max(limit * 4, 20); // fusion needs more than the final list from each ranking
    const rankings = await this.#backend.search(namespace, {
      text: query,
      terms: queryTerms(query),
      respell,
      vector,
      embedder: vector ? this.#embedder.id : undefined,
      limit: depth,
    });
    const fusion = this.#embedder.fusion ?? { weight: 1, minSimilarity: 0 };
    const fused = fuse(
      {
        lexical: rankings.lexical,
        vector: rankings.vector.filter((hit) =>
          hit.score >= fusion.minSimilarity
        ),
      },
      limit,
      { vectorWeight: fusion.weight },
    );
    const entries = await getEntries(
      this.#backend,
      namespace,
      fused.map((hit) => hit.key),
    );
    const hits: SearchHit[] = [];
    for (const [i, hit] of fused.entries()) {
      const stored = entries[i];
      if (!stored) continue; // deleted between ranking and reading
      const entry = await this.#open(stored);
      const matched: SearchHit["matched"] = [];
      if (hit.lexical_rank !== undefined) matched.push("lexical");
      if (hit.vector_rank !== undefined) matched.push("vector");
      hits.push({
        namespace,
        key: entry.key,
        value: entry.value,
        tags: entry.tags,
        score: Number(hit.score.toFixed(6)),
        matched,
      });
    }
    return hits;
  }

  /** The query's embedding (cached), or why there is none. */
  async #queryVector(
    query: string,
  ): Promise<{ value?: Float32Array; error?: string }> {
    const cached = this.#queryVectors.get(query);
    if (cached) {
      this.#stats.cacheHits++;
      return { value: cached };
    }
    this.#stats.cacheMisses++;
    try {
      const [vector] = await this.#embedder.embed([query]);
      if (this.#queryVectors.size >= 512) {
        const oldest = this.#queryVectors.keys().next();
        if (!oldest.done) this.#queryVectors.delete(oldest.value);
      }
      if (vector) this.#queryVectors.set(query, vector);
      return { value: vector };
    } catch (error) {
      this.#log.warn("memory_query_embedding_failed", {
        embedder: this.#embedder.id,
        error: messageOf(error),
      });
      return { error: messageOf(error) };
    }
  }
}

function compare(a: SearchHit, b: SearchHit): number {
  return a.namespace.localeCompare(b.namespace) || a.key.localeCompare(b.key);
}
