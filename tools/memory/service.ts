// The memory server's domain logic, independent of MCP: isolation, at-rest
// encryption of sensitive entries, embeddings, hybrid search and the
// numbers /health and /metrics report. Tools call it; tests can too.

import type { Caller } from "../../platform/identity.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue } from "../../platform/store.ts";
import { decrypt, encrypt } from "../../platform/secrets.ts";
import { ToolError } from "../kit.ts";
import { EntryNotFound, type MemoryBackend } from "./backend.ts";
import type { Embedder } from "./embedder.ts";
import type { MemoryEntry, Message, StoredEntry } from "./model.ts";
import { fuse, indexText, tokenize } from "./search_index.ts";
import { MemoryStats } from "./stats.ts";
import { messageOf } from "../../platform/errors.ts";

/** Conversations of callers not bound to an agent live here. */
export const SHARED_NAMESPACE = "_shared";
export const DEFAULT_SENSITIVE_TAG = "sensitive";

export interface MemoryServiceOptions {
  backend: MemoryBackend;
  embedder: Embedder;
  /** AES-256-GCM key for sensitive values (from the Secrets port). */
  dataKey: CryptoKey;
  log: Logger;
  /** Entries with this tag are encrypted at rest and never embedded. */
  sensitiveTag?: string;
  clock?: () => number;
  /** How often the background job looks for entries to (re-)embed. */
  reindexIntervalMs?: number;
}

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

export class MemoryService {
  readonly backend: MemoryBackend;
  readonly embedder: Embedder;
  readonly stats: MemoryStats;
  readonly sensitiveTag: string;
  readonly #dataKey: CryptoKey;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #queryVectors = new Map<string, Float32Array>();
  readonly #reindexIntervalMs: number;
  #reindexTimer: ReturnType<typeof setTimeout> | undefined;
  #countsTimer: ReturnType<typeof setInterval> | undefined;
  #reindexing: Promise<void> | undefined;
  #lastReindexError: string | undefined;
  #stopped = false;

  constructor(options: MemoryServiceOptions) {
    this.backend = options.backend;
    this.embedder = options.embedder;
    this.#dataKey = options.dataKey;
    this.#log = options.log;
    this.sensitiveTag = options.sensitiveTag ?? DEFAULT_SENSITIVE_TAG;
    this.#clock = options.clock ?? Date.now;
    this.#reindexIntervalMs = options.reindexIntervalMs ?? 30_000;
    this.stats = new MemoryStats(this.#clock);
  }

  /** Starts the background (re-)embedding of entries the current embedder has not seen. */
  start(): void {
    this.#scheduleReindex(0);
    // Entries per namespace for /metrics, which must answer without awaiting the backend.
    void this.stats.refreshCounts(this.backend);
    this.#countsTimer = setInterval(
      () => void this.stats.refreshCounts(this.backend),
      15_000,
    );
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reindexTimer !== undefined) clearTimeout(this.#reindexTimer);
    if (this.#countsTimer !== undefined) clearInterval(this.#countsTimer);
    await this.#reindexing;
  }

  // ---- access -------------------------------------------------------------

  /** A bound caller reaches only its own namespace, whatever the arguments say. */
  assertNamespace(caller: Caller, namespace: string): void {
    if (caller.agent !== undefined && caller.agent !== namespace) {
      this.stats.denied++;
      this.#log.warn("memory_access_denied", {
        agent: caller.agent,
        namespace,
      });
      throw new ToolError(
        `Access denied: agent "${caller.agent}" may only use its own namespace "${caller.agent}", not "${namespace}".`,
      );
    }
  }

  #conversationNamespace(caller: Caller): string {
    return caller.agent ?? SHARED_NAMESPACE;
  }

  // ---- entries -------------------------------------------------------------

  async store(
    caller: Caller,
    input: { namespace: string; key: string; value: string; tags?: string[] },
  ): Promise<{ entry: MemoryEntry; replaced: boolean }> {
    this.assertNamespace(caller, input.namespace);
    const now = new Date(this.#clock()).toISOString();
    const existing = await this.backend.get(input.namespace, input.key);
    const entry = await this.#prepare({
      namespace: input.namespace,
      key: input.key,
      value: input.value,
      // Omitted tags keep the entry's tags; given tags (even []) replace them.
      tags: normalizeTags(input.tags ?? existing?.tags ?? []),
      created_at: existing?.created_at ?? now,
      updated_at: now,
    });
    const previous = await this.stats.time(
      "store",
      () => this.backend.put(entry, "upsert"),
    );
    return { entry: await this.#open(entry), replaced: previous !== null };
  }

  async retrieve(
    caller: Caller,
    namespace: string,
    key: string,
  ): Promise<MemoryEntry> {
    this.assertNamespace(caller, namespace);
    const entry = await this.stats.time(
      "retrieve",
      () => this.backend.get(namespace, key),
    );
    if (!entry) throw notFound(namespace, key);
    return await this.#open(entry);
  }

  async update(
    caller: Caller,
    namespace: string,
    key: string,
    value: string,
  ): Promise<MemoryEntry> {
    this.assertNamespace(caller, namespace);
    const existing = await this.backend.get(namespace, key);
    if (!existing) throw notFound(namespace, key);
    const entry = await this.#prepare({
      namespace,
      key,
      value,
      tags: existing.tags,
      created_at: existing.created_at,
      updated_at: new Date(this.#clock()).toISOString(),
    });
    try {
      await this.stats.time("update", () => this.backend.put(entry, "update"));
    } catch (error) {
      if (error instanceof EntryNotFound) throw notFound(namespace, key);
      throw error;
    }
    return await this.#open(entry);
  }

  async delete(caller: Caller, namespace: string, key: string): Promise<void> {
    this.assertNamespace(caller, namespace);
    const deleted = await this.stats.time(
      "delete",
      () => this.backend.delete(namespace, key),
    );
    if (!deleted) throw notFound(namespace, key);
  }

  async list(
    caller: Caller,
    namespace: string,
    query: { tags?: string[]; limit: number; cursor?: string },
  ): Promise<{ entries: MemoryEntry[]; cursor: string | null }> {
    this.assertNamespace(caller, namespace);
    const page = await this.stats.time(
      "list",
      () =>
        this.backend.list(namespace, {
          tags: query.tags ? normalizeTags(query.tags) : undefined,
          limit: query.limit,
          cursor: query.cursor ?? null,
        }),
    );
    const entries = await Promise.all(
      page.entries.map((entry) => this.#open(entry)),
    );
    return { entries, cursor: page.cursor };
  }

  // ---- search --------------------------------------------------------------

  async search(
    caller: Caller,
    namespace: string,
    query: string,
    limit: number,
  ): Promise<SearchOutcome> {
    this.assertNamespace(caller, namespace);
    const started = performance.now();
    try {
      const vector = await this.#queryVector(query);
      const hits = await this.#searchOne(namespace, query, vector.value, limit);
      return { hits, ...this.#mode(vector) };
    } finally {
      this.stats.observeSearch(performance.now() - started);
    }
  }

  async crossReference(
    caller: Caller,
    query: string,
    namespaces: string[],
    limit: number,
  ): Promise<SearchOutcome & { by_namespace: Record<string, number> }> {
    const unique = [...new Set(namespaces)];
    for (const namespace of unique) this.assertNamespace(caller, namespace);
    const started = performance.now();
    try {
      const vector = await this.#queryVector(query);
      const perNamespace = await Promise.all(
        unique.map((namespace) =>
          this.#searchOne(namespace, query, vector.value, limit)
        ),
      );
      const by_namespace: Record<string, number> = {};
      unique.forEach((namespace, i) =>
        by_namespace[namespace] = perNamespace[i].length
      );
      const hits = perNamespace.flat().sort((a, b) =>
        b.score - a.score || compare(a, b)
      ).slice(0, limit);
      return { hits, by_namespace, ...this.#mode(vector) };
    } finally {
      this.stats.observeSearch(performance.now() - started);
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
    vector: Float32Array | undefined,
    limit: number,
  ): Promise<SearchHit[]> {
    const depth = Math.max(limit * 4, 20); // fusion needs more than the final list from each ranking
    const rankings = await this.backend.search(namespace, {
      text: query,
      terms: tokenize(query),
      vector,
      embedder: vector ? this.embedder.id : undefined,
      limit: depth,
    });
    const fusion = this.embedder.fusion ?? { weight: 1, minSimilarity: 0 };
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
    const entries = await Promise.all(
      fused.map((hit) => this.backend.get(namespace, hit.key)),
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
      this.stats.cacheHits++;
      return { value: cached };
    }
    this.stats.cacheMisses++;
    try {
      const [vector] = await this.embedder.embed([query]);
      if (this.#queryVectors.size >= 512) {
        const oldest = this.#queryVectors.keys().next();
        if (!oldest.done) this.#queryVectors.delete(oldest.value);
      }
      if (vector) this.#queryVectors.set(query, vector);
      return { value: vector };
    } catch (error) {
      this.#log.warn("memory_query_embedding_failed", {
        embedder: this.embedder.id,
        error: messageOf(error),
      });
      return { error: messageOf(error) };
    }
  }

  // ---- conversations -------------------------------------------------------

  async storeConversation(
    caller: Caller,
    sessionId: string,
    messages: {
      role: string;
      content: string;
      extra?: Record<string, unknown>;
    }[],
  ): Promise<{ session_id: string; stored: number; total: number }> {
    const at = new Date(this.#clock()).toISOString();
    const stored: Message[] = messages.map((message) => {
      const out: Message = { role: message.role, content: message.content, at };
      if (message.extra && Object.keys(message.extra).length > 0) {
        out.extra = message.extra;
      }
      return out;
    });
    const total = await this.stats.time(
      "conversation",
      () =>
        this.backend.appendMessages(
          this.#conversationNamespace(caller),
          sessionId,
          stored,
        ),
    );
    return { session_id: sessionId, stored: stored.length, total };
  }

  async history(
    caller: Caller,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return await this.stats.time(
      "history",
      () =>
        this.backend.history(
          this.#conversationNamespace(caller),
          sessionId,
          limit,
        ),
    );
  }

  /** Everything stored for an agent: its entries and its conversations (bounded). */
  async agentContext(
    caller: Caller,
    agent: string,
    bounds: { entries: number; sessions: number; messages: number },
  ): Promise<{
    agent: string;
    entries: MemoryEntry[];
    more_entries: boolean;
    conversations: { session_id: string; messages: Message[] }[];
    more_conversations: boolean;
  }> {
    this.assertNamespace(caller, agent);
    const page = await this.list(caller, agent, { limit: bounds.entries });
    const sessions = await this.backend.sessions(agent);
    const conversations = await Promise.all(
      sessions.slice(0, bounds.sessions).map(async (session_id) => ({
        session_id,
        messages: await this.backend.history(
          agent,
          session_id,
          bounds.messages,
        ),
      })),
    );
    return {
      agent,
      entries: page.entries,
      more_entries: page.cursor !== null,
      conversations,
      more_conversations: sessions.length > bounds.sessions,
    };
  }

  // ---- encryption and embeddings -------------------------------------------

  /** Encrypts sensitive values and embeds the others, ready for the backend. */
  async #prepare(entry: Omit<MemoryEntry, "sensitive">): Promise<StoredEntry> {
    const sensitive = entry.tags.includes(this.sensitiveTag);
    if (sensitive) {
      const value = await encrypt(
        this.#dataKey,
        entry.value,
        context(entry.namespace, entry.key),
      );
      return { ...entry, value, sensitive, embedding: null };
    }
    const stored: StoredEntry = { ...entry, sensitive, embedding: null };
    try {
      const [vector] = await this.embedder.embed([indexText(stored)]);
      if (vector) stored.embedding = { embedder: this.embedder.id, vector };
    } catch (error) {
      // Stored without a vector; the background job embeds it later.
      this.#lastReindexError = messageOf(error);
      this.#log.warn("memory_embedding_failed", {
        embedder: this.embedder.id,
        error: messageOf(error),
      });
      this.#scheduleReindex(this.#reindexIntervalMs);
    }
    return stored;
  }

  /** The entry as tools show it: sensitive values decrypted. */
  async #open(entry: StoredEntry): Promise<MemoryEntry> {
    const value = entry.sensitive
      ? await decrypt(
        this.#dataKey,
        entry.value,
        context(entry.namespace, entry.key),
      )
      : entry.value;
    return {
      namespace: entry.namespace,
      key: entry.key,
      value,
      tags: entry.tags,
      sensitive: entry.sensitive,
      created_at: entry.created_at,
      updated_at: entry.updated_at,
    };
  }

  #scheduleReindex(delayMs: number): void {
    if (this.#stopped || this.#reindexTimer !== undefined) return;
    this.#reindexTimer = setTimeout(() => {
      this.#reindexTimer = undefined;
      this.#reindexing = this.#reindex().finally(() =>
        this.#reindexing = undefined
      );
    }, delayMs);
  }

  /** Embeds entries whose vector is missing or from another embedder, in batches. */
  async #reindex(): Promise<void> {
    let done = 0;
    try {
      while (!this.#stopped) {
        const batch = await this.backend.staleEmbeddings(this.embedder.id, 64);
        if (batch.length === 0) break;
        const vectors = await this.embedder.embed(
          batch.map((entry) => indexText(entry)),
        );
        for (const [i, entry] of batch.entries()) {
          const vector = vectors[i];
          if (!vector) continue;
          await this.backend.setEmbedding(
            entry.namespace,
            entry.key,
            entry.updated_at,
            {
              embedder: this.embedder.id,
              vector,
            },
          );
        }
        done += batch.length;
        this.stats.reindexed += batch.length;
      }
      this.#lastReindexError = undefined;
      if (done > 0) {
        this.#log.info("memory_reindexed", {
          embedder: this.embedder.id,
          entries: done,
        });
      }
    } catch (error) {
      this.#lastReindexError = messageOf(error);
      this.#log.warn("memory_reindex_failed", {
        embedder: this.embedder.id,
        error: messageOf(error),
      });
      this.#scheduleReindex(this.#reindexIntervalMs);
    }
  }

  // ---- observability -------------------------------------------------------

  async health(): Promise<{ [key: string]: JsonValue }> {
    const backend = await this.backend.health();
    const counts = await this.stats.refreshCounts(this.backend);
    return {
      status: backend.status === "ok" ? "ok" : "degraded",
      storage: this.backend.kind,
      backend: backend.status,
      ...(backend.detail ? { backend_detail: backend.detail } : {}),
      ...(backend.queued_writes !== undefined
        ? { queued_writes: backend.queued_writes }
        : {}),
      embedder: this.embedder.id,
      ...(this.#lastReindexError
        ? { embedder_error: this.#lastReindexError }
        : {}),
      ...this.stats.summary(),
      entries_per_namespace: counts,
    };
  }

  metrics(): Metric[] {
    return this.stats.metrics();
  }
}

function context(namespace: string, key: string): string {
  return JSON.stringify([namespace, key]);
}

function notFound(namespace: string, key: string): ToolError {
  return new ToolError(
    `No entry "${key}" in namespace "${namespace}". Use list_memories or search_memory to find keys.`,
  );
}

function normalizeTags(tags: string[]): string[] {
  return [
    ...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag !== "")),
  ];
}

function compare(a: SearchHit, b: SearchHit): number {
  return a.namespace.localeCompare(b.namespace) || a.key.localeCompare(b.key);
}
