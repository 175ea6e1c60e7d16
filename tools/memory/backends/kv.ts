// MemoryBackend over the platform Store (a Deno KV file, or remote KV over KV
// Connect, which is just another KvStore). Search runs on in-memory indexes
// loaded at open (from persisted snapshots, kv_index.ts) and kept in sync by
// this process's writes, so writes by other processes sharing a remote KV
// are seen by search only after a restart.
//
// Record layout: kv_records.ts; indexes: kv_namespaces.ts, persisted by
// kv_index.ts; conversations: kv_conversations.ts.

import type { Logger } from "../../../platform/log.ts";
import {
  MAX_LIST_LIMIT,
  type Mutation,
  type Store,
  type StoreKey,
} from "../../../platform/store/mod.ts";
import {
  EntryNotFound,
  type ListQuery,
  type MemoryBackend,
  TagsChanged,
} from "./port.ts";
import { KvConversations } from "./kv_conversations.ts";
import { NamespaceIndexes } from "./kv_namespaces.ts";
import { IndexStore, journalMutation, newWriteId } from "./kv_index.ts";
import { GroupCommit } from "./kv_group_commit.ts";
import {
  countOf,
  countValue,
  decodeCursor,
  decodeEntry,
  encodeCursor,
  encodeEntry,
  encodeStored,
  listAll,
  type ListCursor,
  tryDecode,
  valueOf,
} from "./kv_records.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  Rankings,
  SearchQuery,
  StoredEntry,
} from "../model.ts";

/** A write touches the entry, the counter and the tag rows: Store commits hold 100 keys. */
export const MAX_TAGS_PER_ENTRY = 48;

export interface KvBackendOptions {
  /** Reported as the backend kind: `local` (default) or `kv-connect`. */
  kind?: string;
  logger?: Logger;
  /** A directory for index images, which make a start fast (kv_index.ts, index_image.ts). */
  images?: string;
}

export class KvBackend implements MemoryBackend {
  readonly kind: string;
  #store: Store;
  #indexes = new NamespaceIndexes();
  #persisted: IndexStore;
  #writes: GroupCommit;
  #conversations: KvConversations;

  private constructor(store: Store, options: KvBackendOptions) {
    this.#store = store;
    this.#writes = new GroupCommit(store);
    this.#conversations = new KvConversations(store, this.#writes);
    this.#persisted = new IndexStore(store, this.#indexes, {
      logger: options.logger,
      images: options.images,
    });
    this.kind = options.kind ?? "local";
  }

  /**
   * Opens the backend and loads every namespace's index (one SearchIndex per
   * namespace) from its snapshot plus journal, or rebuilds it from the
   * entries (kv_index.ts). The backend owns `store`: close() closes it
   * (closing a scoped view leaves the underlying store open).
   */
  static async open(
    store: Store,
    options: KvBackendOptions = {},
  ): Promise<KvBackend> {
    const backend = new KvBackend(store, options);
    const started = performance.now();
    const report = await backend.#persisted.load();
    options.logger?.info("memory_index_loaded", {
      ...report,
      ms: Math.round(performance.now() - started),
    });
    return backend;
  }

  /** Saves the namespace's index snapshot now (tests, benches); false if another process saved one. */
  saveIndex(namespace: string): Promise<boolean> {
    return this.#persisted.save(namespace);
  }

  async get(namespace: string, key: string): Promise<StoredEntry | null> {
    const record = await this.#store.get(["e", namespace, key]);
    return record &&
      this.#withVector(decodeEntry(namespace, key, valueOf(record)));
  }

  /**
   * One Store read for all (Deno KV reads 10 keys per call), not one per
   * key. Without the index's vectors (a search shows its hits, and
   * rebuilding each hit's vector was a fifth of that read's time).
   */
  async getMany(
    namespace: string,
    keys: readonly string[],
  ): Promise<(StoredEntry | null)[]> {
    const records = await this.#store.getMany(
      keys.map((key) => ["e", namespace, key]),
    );
    return records.map((record, i) =>
      record && decodeEntry(namespace, keys[i], valueOf(record))
    );
  }

  /** Records carry no vector (JSON records of earlier versions do): the index has it. */
  #withVector(entry: StoredEntry): StoredEntry {
    if (entry.embedding || entry.sensitive) return entry;
    const index = this.#indexes.get(entry.namespace)?.index;
    return { ...entry, embedding: index?.embedding(entry.key) ?? null };
  }

  put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    return this.#put(entry, mode, false);
  }

  upsertKeepingCreated(
    entry: StoredEntry,
    expectTags?: readonly string[] | null,
  ): Promise<StoredEntry | null> {
    return this.#put(entry, "upsert", true, expectTags);
  }

  /** From the index: this process's writes and what it loaded (another process's later writes are caught by expectTags). */
  knownTags(namespace: string, key: string): readonly string[] | null {
    return this.#indexes.get(namespace)?.index.meta(key)?.tags ?? null;
  }

  async #put(
    entry: StoredEntry,
    mode: "upsert" | "update",
    keepCreated: boolean,
    expectTags?: readonly string[] | null,
  ): Promise<StoredEntry | null> {
    const tags = [...new Set(entry.tags)];
    if (tags.length > MAX_TAGS_PER_ENTRY) {
      throw new Error(
        `Entry "${entry.key}" has ${tags.length} tags; at most ${MAX_TAGS_PER_ENTRY} are allowed`,
      );
    }
    // A sensitive entry's value is ciphertext: an embedding of it must not exist.
    // The index holds what a restart would read back (the quantised vector).
    const written = entry.sensitive ? { ...entry, embedding: null } : entry;
    const { record, stored } = encodeStored(written);
    const { namespace: ns, key } = entry;
    const entryKey: StoreKey = ["e", ns, key];
    const counterKey: StoreKey = ["n", ns];
    const writeId = newWriteId();
    // Built once: the group commit knows a key array by its identity.
    const tagKeys = new Map(
      tags.map((tag): [string, StoreKey] => [tag, ["t", ns, tag, key]]),
    );
    return await this.#writes.write({
      // Tag rows are not read: the entry's check guards them (see below).
      reads: [entryKey, counterKey],
      // An entry this process's index does not hold is new, unless another
      // process wrote it: the commit checks it absent either way.
      absent: (k) => k === entryKey && !this.#indexes.get(ns)?.index.has(key),
      plan: (view) => {
        const current = view.get(entryKey);
        // A corrupt record may still be overwritten (its tag rows are then left behind).
        const old = current === null ? null : tryDecode(ns, key, current);
        if (current === null && mode === "update") {
          throw new EntryNotFound(ns, key);
        }
        if (
          expectTags !== undefined &&
          !(expectTags === null
            ? current === null
            : old !== null && sameTags(old.tags, expectTags))
        ) throw new TagsChanged(ns, key);
        const kept = keepCreated && old !== null &&
          old.created_at !== entry.created_at;
        const mutations: Mutation[] = [{
          type: "set",
          key: entryKey,
          value: kept
            ? encodeEntry({ ...written, created_at: old.created_at })
            : record,
        }, journalMutation(ns, key, writeId, stored.embedding)];
        if (current === null) {
          mutations.push({
            type: "set",
            key: counterKey,
            value: countValue(view.get(counterKey)) + 1,
          });
        }
        const oldTags = new Set(old?.tags);
        for (const tag of oldTags) {
          if (!tags.includes(tag)) {
            mutations.push({ type: "delete", key: ["t", ns, tag, key] });
          }
        }
        for (const [tag, tagKey] of tagKeys) {
          if (!oldTags.has(tag)) {
            // Empty, and written only with its entry, whose check guards it:
            // the Store need not read or check the row (as journal rows).
            mutations.push({
              type: "set",
              key: tagKey,
              value: null,
              newKey: true,
            });
          }
        }
        return {
          result: old,
          mutations,
          applied: () => this.#indexes.track(stored, writeId),
        };
      },
    });
  }

  delete(namespace: string, key: string): Promise<boolean> {
    const entryKey: StoreKey = ["e", namespace, key];
    const counterKey: StoreKey = ["n", namespace];
    const writeId = newWriteId();
    return this.#writes.write({
      reads: [entryKey, counterKey],
      plan: (view) => {
        const current = view.get(entryKey);
        if (current === null) return { result: false, mutations: [] };
        const old = tryDecode(namespace, key, current);
        const count = countValue(view.get(counterKey)) - 1;
        const mutations: Mutation[] = [
          { type: "delete", key: entryKey },
          journalMutation(namespace, key, writeId, null),
          count > 0
            ? { type: "set", key: counterKey, value: count }
            : { type: "delete", key: counterKey },
          ...[...new Set(old?.tags)].map((tag): Mutation => ({
            type: "delete",
            key: ["t", namespace, tag, key],
          })),
        ];
        return {
          result: true,
          mutations,
          applied: () => this.#indexes.untrack(namespace, key, writeId),
        };
      },
    });
  }

  async list(namespace: string, query: ListQuery): Promise<EntryPage> {
    if (
      !Number.isInteger(query.limit) || query.limit < 1 ||
      query.limit > MAX_LIST_LIMIT
    ) {
      throw new Error(
        `List limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${query.limit}`,
      );
    }
    const tags = [...new Set(query.tags ?? [])];
    const cursor = query.cursor ? decodeCursor(query.cursor, tags) : null;
    if (tags.length === 0) {
      const page = await this.#store.list(["e", namespace], {
        limit: query.limit,
        cursor: cursor?.store,
      });
      return {
        entries: page.entries.map((record) =>
          this.#withVector(
            decodeEntry(namespace, String(record.key[2]), valueOf(record)),
          )
        ),
        cursor: page.cursor && encodeCursor({ store: page.cursor }),
      };
    }
    return await this.#listByTags(namespace, tags, query.limit, cursor);
  }

  /**
   * Walks the rarest tag's index rows. The walked tag's rows are the truth;
   * the other tags are pre-checked in memory, and keys unknown here (written
   * by another daemon sharing the store) are read and checked too.
   */
  async #listByTags(
    namespace: string,
    tags: string[],
    limit: number,
    cursor: ListCursor | null,
  ): Promise<EntryPage> {
    const state = this.#indexes.get(namespace);
    const count = (tag: string) => state?.index.tagCount(tag) ?? 0;
    const walk = cursor?.tag ??
      tags.reduce((best, tag) => count(tag) < count(best) ? tag : best);
    const prefix: StoreKey = ["t", namespace, walk];
    const others = tags.filter((tag) => tag !== walk);
    const keys: string[] = [];
    let from = cursor?.store;
    let next: string | null = null;
    for (;;) {
      const page = await this.#store.list(prefix, {
        limit: Math.min(MAX_LIST_LIMIT, Math.max(limit, 100)),
        cursor: from,
      });
      const full = page.entries.findIndex((row) => {
        const key = row.key[3];
        if (typeof key !== "string") return false;
        const meta = state?.index.meta(key);
        if (!meta || others.every((tag) => meta.tags.includes(tag))) {
          keys.push(key);
        }
        return keys.length === limit;
      });
      if (full === -1 && page.cursor !== null) {
        from = page.cursor;
        continue;
      }
      // The page may hold rows past the last key kept: re-list to end right after it.
      next = full === -1 || full === page.entries.length - 1
        ? page.cursor
        : (await this.#store.list(prefix, { limit: full + 1, cursor: from }))
          .cursor;
      break;
    }
    const records = await this.#store.getMany(
      keys.map((key) => ["e", namespace, key]),
    );
    const entries: StoredEntry[] = [];
    for (const [i, record] of records.entries()) {
      const entry = record && tryDecode(namespace, keys[i], valueOf(record));
      // Another process may have changed the entry since it was indexed.
      if (entry && tags.every((tag) => entry.tags.includes(tag))) {
        entries.push(this.#withVector(entry));
      }
    }
    return {
      entries,
      cursor: next && encodeCursor({ tag: walk, store: next }),
    };
  }

  async countByNamespace(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for await (const record of listAll(this.#store, ["n"])) {
      const count = countOf(record);
      if (typeof record.key[1] === "string" && count > 0) {
        counts[record.key[1]] = count;
      }
    }
    return counts;
  }

  search(namespace: string, query: SearchQuery): Promise<Rankings> {
    const index = this.#indexes.get(namespace)?.index;
    return Promise.resolve(
      index ? index.search(query) : { lexical: [], vector: [] },
    );
  }

  /** Entries in index order (not key order); an entry that never embeds keeps coming back. */
  async staleEmbeddings(
    embedder: string,
    limit: number,
  ): Promise<StoredEntry[]> {
    const keys: StoreKey[] = [];
    outer: for (const [namespace, state] of this.#indexes.entries()) {
      for (const key of state.index.staleKeys(embedder)) {
        if (keys.length >= limit) break outer;
        keys.push(["e", namespace, key]);
      }
    }
    const entries: StoredEntry[] = [];
    for (const record of await this.#store.getMany(keys)) {
      if (!record) continue;
      const [, namespace, key] = record.key;
      const entry = this.#withVector(
        decodeEntry(String(namespace), String(key), valueOf(record)),
      );
      if (!entry.sensitive && entry.embedding?.embedder !== embedder) {
        entries.push(entry);
      }
    }
    return entries;
  }

  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void> {
    const entryKey: StoreKey = ["e", namespace, key];
    const writeId = newWriteId();
    return this.#writes.write({
      reads: [entryKey],
      plan: (view) => {
        const current = view.get(entryKey);
        if (current === null) return { result: undefined, mutations: [] };
        const entry = decodeEntry(namespace, key, current);
        // The entry changed since the caller read it: its text is not what was embedded.
        if (entry.updated_at !== updatedAt || entry.sensitive) {
          return { result: undefined, mutations: [] };
        }
        // Rewritten too: a JSON record of an earlier version drops its vector.
        const { record: value, stored: updated } = encodeStored({
          ...entry,
          embedding,
        });
        return {
          result: undefined,
          mutations: [{
            type: "set",
            key: entryKey,
            value,
          }, journalMutation(namespace, key, writeId, updated.embedding)],
          applied: () => this.#indexes.track(updated, writeId),
        };
      },
    });
  }

  appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    return this.#conversations.append(namespace, sessionId, messages);
  }

  history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return this.#conversations.history(namespace, sessionId, limit);
  }

  sessions(namespace: string): Promise<string[]> {
    return this.#conversations.sessions(namespace);
  }

  health(): Promise<BackendHealth> {
    return Promise.resolve({ status: "ok" });
  }

  async close(): Promise<void> {
    await this.#writes.settled();
    await this.#persisted.close();
    await this.#store.close();
  }
}

/** Same tags in the same order (the order is part of the entry). */
function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((tag, i) => tag === b[i]);
}
