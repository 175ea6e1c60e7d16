// KvBackend's in-memory state per namespace (search index with each entry's
// tags, sensitivity and embedder), updated by the group commit
// (kv_group_commit.ts) in commit order. Persisted by kv_index.ts.

import type { StoredEntry } from "../model.ts";
import { indexText, SearchIndex } from "../search_index.ts";

export interface Namespace {
  index: SearchIndex;
  /**
   * Journal rows (key → write id) this index holds that no saved snapshot
   * does yet: a snapshot deletes exactly these rows once it is saved.
   */
  pending: Map<string, string>;
}

/** The indexes of every namespace, kept in sync with the entries this process writes. */
export class NamespaceIndexes {
  #namespaces = new Map<string, Namespace>();
  /** Called after a journaled change (kv_index.ts decides whether to save). */
  onChange: (namespace: string) => void = () => {};

  get size(): number {
    return this.#namespaces.size;
  }

  get(namespace: string): Namespace | undefined {
    return this.#namespaces.get(namespace);
  }

  entries(): MapIterator<[string, Namespace]> {
    return this.#namespaces.entries();
  }

  /** Installs a namespace loaded from a snapshot. */
  set(namespace: string, state: Namespace): void {
    this.#namespaces.set(namespace, state);
  }

  /** `writeId`: the journal row the write left (absent while loading entries). */
  track(entry: StoredEntry, writeId?: string): void {
    const state = this.#state(entry.namespace);
    indexEntry(state.index, entry);
    this.#journaled(entry.namespace, state, entry.key, writeId);
  }

  untrack(namespace: string, key: string, writeId?: string): void {
    const state = writeId === undefined
      ? this.#namespaces.get(namespace)
      : this.#state(namespace);
    if (!state) return;
    state.index.remove(key);
    this.#journaled(namespace, state, key, writeId);
  }

  #state(namespace: string): Namespace {
    let state = this.#namespaces.get(namespace);
    if (!state) {
      state = { index: new SearchIndex(), pending: new Map() };
      this.#namespaces.set(namespace, state);
    }
    return state;
  }

  #journaled(
    namespace: string,
    state: Namespace,
    key: string,
    writeId: string | undefined,
  ): void {
    if (writeId === undefined) return;
    state.pending.set(key, writeId);
    this.onChange(namespace);
  }
}

/** Indexes an entry's text, vector, tags and sensitivity. */
export function indexEntry(index: SearchIndex, entry: StoredEntry): void {
  index.upsert(entry.key, indexText(entry), entry.embedding, {
    tags: entry.tags,
    sensitive: entry.sensitive,
  });
}
