// Embeddings of memory entries: on write (builtin), right after the commit
// (remote embedders, batched), and a background job that (re-)embeds entries
// whose vector is missing or from another embedder.

import type { Logger } from "../../platform/log.ts";
import { messageOf } from "../../platform/errors.ts";
import type { MemoryBackend } from "./backends/port.ts";
import type { Embedder } from "./model.ts";
import type { StoredEntry } from "./model.ts";
import { indexText } from "./search_index.ts";
import type { MemoryStats } from "./stats.ts";

export interface EmbeddingJobOptions {
  backend: MemoryBackend;
  embedder: Embedder;
  stats: MemoryStats;
  log: Logger;
  /** How often the background job looks for entries to (re-)embed. */
  intervalMs: number;
}

export class EmbeddingJob {
  readonly #backend: MemoryBackend;
  readonly #embedder: Embedder;
  readonly #stats: MemoryStats;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #lastError: string | undefined;
  #stopped = false;
  /** Committed entries waiting for their vector (remote embedders). */
  #later: StoredEntry[] = [];
  #embeddingLater: Promise<void> | undefined;

  constructor(options: EmbeddingJobOptions) {
    this.#backend = options.backend;
    this.#embedder = options.embedder;
    this.#stats = options.stats;
    this.#log = options.log;
    this.#intervalMs = options.intervalMs;
  }

  /** Why the last embedding failed, until a background run succeeds. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Sets the entry's embedding; on failure leaves it null and retries in the background. */
  async embedNew(stored: StoredEntry): Promise<void> {
    try {
      const [vector] = await this.#embedder.embed([indexText(stored)]);
      if (vector) stored.embedding = { embedder: this.#embedder.id, vector };
    } catch (error) {
      // Stored without a vector; the background job embeds it later.
      this.#failed("memory_embedding_failed", error);
    }
  }

  /** Embeds a committed entry in the background, batched with others written meanwhile. */
  embedLater(entry: StoredEntry): void {
    if (this.#stopped) return; // the re-embedding job finds it at the next start
    this.#later.push(entry);
    this.#embeddingLater ??= this.#drainLater().finally(() =>
      this.#embeddingLater = undefined
    );
  }

  async #drainLater(): Promise<void> {
    // Let the writes of this turn join the first batch.
    await Promise.resolve();
    while (this.#later.length > 0) {
      const batch = this.#later.splice(0, 64);
      try {
        await this.#embedBatch(batch);
      } catch (error) {
        // Stored without a vector; the background job embeds them later.
        this.#failed("memory_embedding_failed", error);
      }
    }
  }

  schedule(delayMs: number): void {
    if (this.#stopped || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#reindex().finally(() => this.#running = undefined);
    }, delayMs);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    while (this.#embeddingLater) await this.#embeddingLater;
    await this.#running;
  }

  /** Embeds entries whose vector is missing or from another embedder, in batches. */
  async #reindex(): Promise<void> {
    let done = 0;
    try {
      while (!this.#stopped) {
        const batch = await this.#backend.staleEmbeddings(
          this.#embedder.id,
          64,
        );
        if (batch.length === 0) break;
        await this.#embedBatch(batch);
        done += batch.length;
        this.#stats.reindexed += batch.length;
      }
      this.#lastError = undefined;
      if (done > 0) {
        this.#log.info("memory_reindexed", {
          embedder: this.#embedder.id,
          entries: done,
        });
      }
    } catch (error) {
      this.#failed("memory_reindex_failed", error);
    }
  }

  /** Embeds the entries' texts and stores each vector the embedder returned. */
  async #embedBatch(batch: StoredEntry[]): Promise<void> {
    const vectors = await this.#embedder.embed(
      batch.map((entry) => indexText(entry)),
    );
    for (const [i, entry] of batch.entries()) {
      const vector = vectors[i];
      if (!vector) continue;
      await this.#backend.setEmbedding(
        entry.namespace,
        entry.key,
        entry.updated_at,
        { embedder: this.#embedder.id, vector },
      );
    }
  }

  /** Keeps and logs the error, and retries at the next interval. */
  #failed(event: string, error: unknown): void {
    this.#lastError = messageOf(error);
    this.#log.warn(event, {
      embedder: this.#embedder.id,
      error: messageOf(error),
    });
    this.schedule(this.#intervalMs);
  }
}
