// The memory server's data model, shared by the service, the tools and the
// storage backends.

/** An entry as tools see it: plaintext value, ISO times. */
export interface MemoryEntry {
  namespace: string;
  key: string;
  value: string;
  tags: string[];
  /** Encrypted at rest (AES-256-GCM); set by the `sensitive` tag. */
  sensitive: boolean;
  created_at: string;
  updated_at: string;
}

/** The embedding of an entry's text, tagged with the embedder that made it. */
export interface Embedding {
  /** e.g. `builtin:hash-v2:256`, `openai:text-embedding-3-small`, `ollama:nomic-embed-text`. */
  embedder: string;
  vector: Float32Array;
}

/**
 * An entry as a backend stores it. For sensitive entries `value` is the
 * ciphertext envelope (`enc:v1:<base64 iv>:<base64 ciphertext>`) and no
 * embedding or searchable text is kept.
 */
export interface StoredEntry extends MemoryEntry {
  embedding: Embedding | null;
}

/** One conversation message; `role` and `content` are what models exchange. */
export interface Message {
  role: string;
  content: string;
  /** ISO time the message was stored. */
  at: string;
  /** Anything else the caller sent with the message (name, tool_call_id, ...). */
  extra?: Record<string, unknown>;
}

export interface EntryPage {
  entries: StoredEntry[];
  /** Opaque; pass back to get the next page. null: no more. */
  cursor: string | null;
}

/** A search hit from one ranking (lexical or vector), best first. */
export interface RankedKey {
  key: string;
  score: number;
}

export interface SearchQuery {
  /** The raw query text. */
  text: string;
  /** The query's tokens (see search_index.ts `tokenize`), for lexical ranking. */
  terms: string[];
  /**
   * Terms for query words the index knows no entry for, spelled as the
   * nearest word it knows (search_respell.ts); `df` gives a term's entry
   * count. Ranked below the query's own terms.
   */
  respell?: (df: (term: string) => number) => string[];
  /** The query's embedding by the current embedder; absent when no embedder answered. */
  vector?: Float32Array;
  /** Only embeddings made by this embedder are compared. */
  embedder?: string;
  /** How many hits each ranking returns at most. */
  limit: number;
}

export interface Rankings {
  lexical: RankedKey[];
  vector: RankedKey[];
}

export type BackendStatus = "ok" | "degraded" | "down";

export interface BackendHealth {
  status: BackendStatus;
  /** What a person needs to know: "PostgreSQL unreachable since 12:03:11; 4 writes queued". */
  detail?: string;
  /** Writes waiting for the hosted store (hosted mode only). */
  queued_writes?: number;
}

/** What a backend knows about itself without a round trip, for /metrics. */
export interface StorageStatus {
  /** The store is unreachable (hosted: served from the local cache) or could not open. */
  degraded: boolean;
  /** Writes waiting for the hosted store. */
  queued_writes: number;
  /**
   * Reads the local cache served while the hosted store was away: a hit when
   * the cache had an answer, a miss when it came back empty.
   */
  cache_hits: number;
  cache_misses: number;
}

/** Turns texts into vectors for search; implementations in embedder_*.ts. */
export interface Embedder {
  /** Stored with every embedding; vectors are only compared within one id. */
  readonly id: string;
  /** One L2-normalised vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * How much the vector ranking counts in hybrid search: its weight in the
   * rank fusion (lexical is 1) and the least cosine similarity a vector hit
   * needs. Default: weight 1, any positive similarity.
   */
  readonly fusion?: { weight: number; minSimilarity: number };
  /**
   * A remote embedder (HTTP round trip): writes do not wait for it; entries
   * are embedded in batches right after their commit.
   */
  readonly remote?: boolean;
}
