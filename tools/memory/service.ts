// The memory server's domain logic, independent of MCP: isolation, at-rest
// encryption of sensitive entries, embeddings, hybrid search and the
// numbers /health and /metrics report. Tools call it; tests can too.
// Its parts: service_access.ts, service_writes.ts, service_embedding.ts,
// service_search.ts and service_conversations.ts.

import { SessionResults } from "../kit/session_results.ts";
import type { Caller } from "../../platform/identity.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { MemoryBackend } from "./backends/port.ts";
import type { Embedder } from "./model.ts";
import type { MemoryEntry, Message, StoredEntry } from "./model.ts";
import { assertNamespace } from "./service_access.ts";
import {
  Conversations,
  type NewMessage,
  type StoredMessages,
} from "./service_conversations.ts";
import { EmbeddingJob } from "./service_embedding.ts";
import { HybridSearch, type SearchOutcome } from "./service_search.ts";
import {
  EntryWrites,
  type ImportOutcome,
  normalizeTags,
  notFound,
} from "./service_writes.ts";
import { MemoryStats } from "./stats.ts";

export { SHARED_NAMESPACE } from "./service_access.ts";
export type { SearchHit, SearchOutcome } from "./service_search.ts";

// In defaults.ts, so that the config section (config.ts, which an idle
// `agentd serve` reads) does not load the service.
import { DEFAULT_SENSITIVE_TAG } from "./defaults.ts";
export { DEFAULT_SENSITIVE_TAG };

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
  /** Characters of list_memories text past which the page becomes a resource. */
  listBudget?: number;
  /** Bytes of such resources kept for all sessions. */
  resultsMaxBytes?: number;
}

export const RESULT_PREFIX = "agentd://memory/results/";

export class MemoryService {
  readonly backend: MemoryBackend;
  readonly embedder: Embedder;
  readonly stats: MemoryStats;
  readonly sensitiveTag: string;
  /** Long listings of each session, served as MCP resources. */
  readonly results: SessionResults;
  readonly listBudget: number;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #embedding: EmbeddingJob;
  readonly #writes: EntryWrites;
  readonly #search: HybridSearch;
  readonly #conversations: Conversations;
  #countsTimer: ReturnType<typeof setInterval> | undefined;

  constructor(options: MemoryServiceOptions) {
    this.backend = options.backend;
    this.embedder = options.embedder;
    this.#log = options.log;
    this.sensitiveTag = options.sensitiveTag ?? DEFAULT_SENSITIVE_TAG;
    this.#clock = options.clock ?? Date.now;
    this.stats = new MemoryStats(this.#clock);
    this.results = new SessionResults(
      RESULT_PREFIX,
      options.resultsMaxBytes ?? 64_000_000,
    );
    this.listBudget = options.listBudget ?? 24_000;
    const parts = {
      backend: this.backend,
      embedder: this.embedder,
      stats: this.stats,
      log: this.#log,
    };
    this.#embedding = new EmbeddingJob({
      ...parts,
      intervalMs: options.reindexIntervalMs ?? 30_000,
    });
    this.#writes = new EntryWrites({
      ...parts,
      embedding: this.#embedding,
      clock: this.#clock,
      dataKey: options.dataKey,
      sensitiveTag: this.sensitiveTag,
    });
    this.#search = new HybridSearch({
      ...parts,
      open: (entry) => this.#open(entry),
    });
    this.#conversations = new Conversations({
      backend: this.backend,
      stats: this.stats,
      clock: this.#clock,
    });
  }

  /** Starts the background (re-)embedding of entries the current embedder has not seen. */
  start(): void {
    this.#embedding.schedule(0);
    // Entries per namespace for /metrics, which must answer without awaiting the backend.
    void this.stats.refreshCounts(this.backend);
    this.#countsTimer = setInterval(
      () => void this.stats.refreshCounts(this.backend),
      15_000,
    );
  }

  async stop(): Promise<void> {
    if (this.#countsTimer !== undefined) clearInterval(this.#countsTimer);
    await this.#embedding.stop();
  }

  // ---- access -------------------------------------------------------------

  /** A bound caller reaches only its own namespace, whatever the arguments say. */
  assertNamespace(caller: Caller, namespace: string): void {
    assertNamespace(caller, namespace, { stats: this.stats, log: this.#log });
  }

  // ---- entries -------------------------------------------------------------

  async store(
    caller: Caller,
    input: { namespace: string; key: string; value: string; tags?: string[] },
  ): Promise<{ entry: MemoryEntry; replaced: boolean }> {
    this.assertNamespace(caller, input.namespace);
    return await this.#writes.store(input);
  }

  /** Many entries of one namespace in batches (import_memories); see EntryWrites.importEntries. */
  async importEntries(
    caller: Caller,
    namespace: string,
    entries: readonly { key: string; value: string; tags?: string[] }[],
    options?: {
      signal?: AbortSignal;
      progress?: (done: number) => Promise<void> | void;
    },
  ): Promise<ImportOutcome> {
    this.assertNamespace(caller, namespace);
    return await this.#writes.importEntries(namespace, entries, options);
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
    return await this.#writes.update(namespace, key, value);
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
    return await this.#search.one(namespace, query, limit);
  }

  async crossReference(
    caller: Caller,
    query: string,
    namespaces: string[],
    limit: number,
  ): Promise<SearchOutcome & { by_namespace: Record<string, number> }> {
    const unique = [...new Set(namespaces)];
    for (const namespace of unique) this.assertNamespace(caller, namespace);
    return await this.#search.many(unique, query, limit);
  }

  // ---- conversations -------------------------------------------------------

  storeConversation(
    caller: Caller,
    sessionId: string,
    messages: readonly NewMessage[],
  ): Promise<StoredMessages> {
    return this.#conversations.store(caller, sessionId, messages);
  }

  history(
    caller: Caller,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return this.#conversations.history(caller, sessionId, limit);
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
    const { conversations, more } = await this.#conversations.ofAgent(
      agent,
      bounds,
    );
    return {
      agent,
      entries: page.entries,
      more_entries: page.cursor !== null,
      conversations,
      more_conversations: more,
    };
  }

  /** The entry as tools show it: sensitive values decrypted. */
  #open(entry: StoredEntry): Promise<MemoryEntry> {
    return this.#writes.open(entry);
  }

  // ---- observability -------------------------------------------------------

  async health(): Promise<{ [key: string]: JsonValue }> {
    const backend = await this.backend.health();
    const counts = await this.stats.refreshCounts(this.backend);
    const entries = Object.values(counts).reduce((sum, n) => sum + n, 0);
    const namespaces = Object.keys(counts).length;
    return {
      status: backend.status === "ok" ? "ok" : "degraded",
      // The dashboard's one line for this server (no namespace names: those are agents').
      summary:
        `${entries} ${entries === 1 ? "entry" : "entries"} in ${namespaces} ` +
        (namespaces === 1 ? "namespace" : "namespaces") +
        (backend.status === "ok" ? "" : ` · storage ${backend.status}`),
      storage: this.backend.kind,
      backend: backend.status,
      ...(backend.detail ? { backend_detail: backend.detail } : {}),
      ...(backend.queued_writes !== undefined
        ? { queued_writes: backend.queued_writes }
        : {}),
      embedder: this.embedder.id,
      ...(this.#embedding.lastError
        ? { embedder_error: this.#embedding.lastError }
        : {}),
      ...this.stats.summary(this.backend.status?.()),
      entries_per_namespace: counts,
      results: { count: this.results.count, bytes: this.results.bytes },
    };
  }

  metrics(): Metric[] {
    return this.stats.metrics(this.backend.status?.());
  }
}
