// The memory service's entry writes (store_memory, update_memory): tags kept
// or given, created_at kept within the write, sensitive values sealed and the
// others embedded before the write (a remote embedder's after the commit).
// Apart from service.ts, which checks the caller's namespace first.

import { ToolError } from "../kit/mod.ts";
import {
  EntryNotFound,
  type MemoryBackend,
  TagsChanged,
  upsertKeepingCreated,
} from "./backends/port.ts";
import type { Embedder, MemoryEntry, StoredEntry } from "./model.ts";
import { openEntry, sealEntry } from "./service_access.ts";
import type { EmbeddingJob } from "./service_embedding.ts";
import type { MemoryStats } from "./stats.ts";

export interface EntryWritesOptions {
  backend: MemoryBackend;
  embedder: Embedder;
  embedding: EmbeddingJob;
  stats: MemoryStats;
  clock: () => number;
  /** AES-256-GCM key for sensitive values. */
  dataKey: CryptoKey;
  /** Entries with this tag are encrypted at rest and never embedded. */
  sensitiveTag: string;
}

export class EntryWrites {
  readonly #backend: MemoryBackend;
  readonly #embedder: Embedder;
  readonly #embedding: EmbeddingJob;
  readonly #stats: MemoryStats;
  readonly #clock: () => number;
  readonly #dataKey: CryptoKey;
  readonly #sensitiveTag: string;

  constructor(options: EntryWritesOptions) {
    this.#backend = options.backend;
    this.#embedder = options.embedder;
    this.#embedding = options.embedding;
    this.#stats = options.stats;
    this.#clock = options.clock;
    this.#dataKey = options.dataKey;
    this.#sensitiveTag = options.sensitiveTag;
  }

  async store(
    input: { namespace: string; key: string; value: string; tags?: string[] },
  ): Promise<{ entry: MemoryEntry; replaced: boolean }> {
    const now = new Date(this.#clock()).toISOString();
    if (input.tags !== undefined) {
      // Given tags need nothing from the old entry: its created_at is kept within the write.
      const tags = normalizeTags(input.tags);
      return await this.#store(
        input,
        tags,
        now,
        undefined,
        (entry) => upsertKeepingCreated(this.#backend, entry),
      );
    }
    // Omitted tags keep the entry's tags: as this process knows them, checked
    // at the write (another process may have changed them), else read first.
    const known = this.#backend.knownTags?.(input.namespace, input.key);
    const keeping = this.#backend.upsertKeepingCreated?.bind(this.#backend);
    if (known !== undefined && keeping) {
      const tags = normalizeTags([...(known ?? [])]);
      try {
        return await this.#store(
          input,
          tags,
          now,
          undefined,
          (entry) =>
            keeping(entry, known).catch((error) => {
              // Not a failed store: it is prepared again below.
              if (error instanceof TagsChanged) return STALE;
              throw error;
            }),
        );
      } catch (error) {
        if (!(error instanceof TagsChanged)) throw error;
      }
    }
    const existing = await this.#backend.get(input.namespace, input.key);
    const tags = normalizeTags(existing?.tags ?? []);
    return await this.#store(
      input,
      tags,
      now,
      existing?.created_at ?? now,
      (entry) => this.#backend.put(entry, "upsert"),
    );
  }

  /**
   * Prepares the entry and writes it with `write`; throws TagsChanged when
   * `write` answered STALE (counted as a store, not as a failed one).
   * `createdAt` undefined: the created_at of the entry the write replaced
   * (decided within the write), else `now` for a new entry.
   */
  async #store(
    input: { namespace: string; key: string; value: string },
    tags: string[],
    now: string,
    createdAt: string | undefined,
    write: (entry: StoredEntry) => Promise<StoredEntry | null | typeof STALE>,
  ): Promise<{ entry: MemoryEntry; replaced: boolean }> {
    const entry = await this.#prepare({
      namespace: input.namespace,
      key: input.key,
      value: input.value,
      tags,
      created_at: createdAt ?? now,
      updated_at: now,
    });
    const previous = await this.#stats.time("store", () => write(entry));
    if (previous === STALE) throw new TagsChanged(input.namespace, input.key);
    if (createdAt === undefined && previous) {
      entry.created_at = previous.created_at;
    }
    this.#embedAfterCommit(entry);
    return { entry: await this.open(entry), replaced: previous !== null };
  }

  /**
   * Stores many entries of one namespace, as store() would each, with
   * IMPORT_BATCH writes in flight (they share group commits; a write starts
   * as soon as one is answered, so commits follow each other without a gap).
   * A key given twice is written in order: its second write starts once the
   * first is answered. `progress` runs each time the entries answered from
   * the first on (each committed or failed) pass another IMPORT_BATCH, and at
   * the end; a set `signal` starts no more writes. An entry that fails is
   * listed and the others are stored.
   */
  async importEntries(
    namespace: string,
    entries: readonly { key: string; value: string; tags?: string[] }[],
    options: {
      signal?: AbortSignal;
      progress?: (done: number) => Promise<void> | void;
    } = {},
  ): Promise<ImportOutcome> {
    const outcome: ImportOutcome = {
      stored: 0,
      replaced: 0,
      failed: [],
      done: 0,
    };
    const failed: { index: number; key: string; error: string }[] = [];
    const answered = new Uint8Array(entries.length);
    /** The last write started of each key, while in flight. */
    const writing = new Map<string, Promise<void>>();
    let next = 0;
    let reported = 0;
    const lane = async () => {
      while (next < entries.length) {
        options.signal?.throwIfAborted();
        const index = next++;
        const entry = entries[index];
        const before = writing.get(entry.key);
        const write = (async () => {
          await before;
          try {
            const { replaced } = await this.store({ namespace, ...entry });
            outcome.stored++;
            if (replaced) outcome.replaced++;
          } catch (error) {
            failed.push({
              index,
              key: entry.key,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        })();
        writing.set(entry.key, write);
        await write;
        if (writing.get(entry.key) === write) writing.delete(entry.key);
        answered[index] = 1;
        while (outcome.done < entries.length && answered[outcome.done]) {
          outcome.done++;
        }
        if (
          outcome.done - reported >= IMPORT_BATCH ||
          (outcome.done === entries.length && reported < outcome.done)
        ) {
          reported = outcome.done;
          await options.progress?.(reported);
        }
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(IMPORT_BATCH, entries.length) }, lane),
    );
    outcome.failed = failed.sort((a, b) => a.index - b.index).map((
      { key, error },
    ) => ({ key, error }));
    return outcome;
  }

  async update(
    namespace: string,
    key: string,
    value: string,
  ): Promise<MemoryEntry> {
    const existing = await this.#backend.get(namespace, key);
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
      await this.#stats.time(
        "update",
        () => this.#backend.put(entry, "update"),
      );
      this.#embedAfterCommit(entry);
    } catch (error) {
      if (error instanceof EntryNotFound) throw notFound(namespace, key);
      throw error;
    }
    return await this.open(entry);
  }

  /** The entry as tools show it: sensitive values decrypted. */
  open(entry: StoredEntry): Promise<MemoryEntry> {
    return openEntry(this.#dataKey, entry);
  }

  /** Encrypts sensitive values and embeds the others, ready for the backend. */
  async #prepare(entry: Omit<MemoryEntry, "sensitive">): Promise<StoredEntry> {
    if (entry.tags.includes(this.#sensitiveTag)) {
      return await sealEntry(this.#dataKey, entry);
    }
    const stored: StoredEntry = { ...entry, sensitive: false, embedding: null };
    // A remote embedder's round trip stays off the write path (see #embedAfterCommit).
    if (!this.#embedder.remote) await this.#embedding.embedNew(stored);
    return stored;
  }

  #embedAfterCommit(entry: StoredEntry): void {
    if (this.#embedder.remote && !entry.sensitive) {
      this.#embedding.embedLater(entry);
    }
  }
}

/** Writes of an import in flight, and the step of its progress reports: about four commits' worth of new entries. */
export const IMPORT_BATCH = 100;

export interface ImportOutcome {
  /** Entries stored (new or replacing). */
  stored: number;
  /** Of those, how many replaced an entry. */
  replaced: number;
  /** Entries not stored, with why. */
  failed: { key: string; error: string }[];
  /** Entries handled (stored or failed), in input order. */
  done: number;
}

/** What a write answers when it found the entry's tags changed: prepare it again. */
const STALE = Symbol("stale");

export function notFound(namespace: string, key: string): ToolError {
  return new ToolError(
    `No entry "${key}" in namespace "${namespace}". Use list_memories or search_memory to find keys.`,
  );
}

export function normalizeTags(tags: string[]): string[] {
  return [
    ...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag !== "")),
  ];
}
