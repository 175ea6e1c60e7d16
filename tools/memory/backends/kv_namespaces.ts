// KvBackend's in-memory state per namespace (search index, entry metadata, tag
// counts), updated by the group commit (kv_group_commit.ts) in commit order.

import type { StoredEntry } from "../model.ts";
import { indexText, SearchIndex } from "../search_index.ts";

/** What search and list-by-tag need to know about an entry without reading it. */
export interface Meta {
  tags: string[];
  sensitive: boolean;
  embedder: string | null;
}

export interface Namespace {
  index: SearchIndex;
  meta: Map<string, Meta>;
  tagCounts: Map<string, number>;
}

/** The indexes of every namespace, kept in sync with the entries this process writes. */
export class NamespaceIndexes {
  #namespaces = new Map<string, Namespace>();

  get size(): number {
    return this.#namespaces.size;
  }

  get(namespace: string): Namespace | undefined {
    return this.#namespaces.get(namespace);
  }

  entries(): MapIterator<[string, Namespace]> {
    return this.#namespaces.entries();
  }

  track(entry: StoredEntry): void {
    let state = this.#namespaces.get(entry.namespace);
    if (!state) {
      state = {
        index: new SearchIndex(),
        meta: new Map(),
        tagCounts: new Map(),
      };
      this.#namespaces.set(entry.namespace, state);
    }
    this.untrack(entry.namespace, entry.key);
    const tags = [...new Set(entry.tags)];
    for (const tag of tags) {
      state.tagCounts.set(tag, (state.tagCounts.get(tag) ?? 0) + 1);
    }
    state.meta.set(entry.key, {
      tags,
      sensitive: entry.sensitive,
      embedder: entry.embedding?.embedder ?? null,
    });
    state.index.upsert(entry.key, indexText(entry), entry.embedding);
  }

  untrack(namespace: string, key: string): void {
    const state = this.#namespaces.get(namespace);
    const meta = state?.meta.get(key);
    if (!state || !meta) return;
    for (const tag of meta.tags) {
      const left = (state.tagCounts.get(tag) ?? 1) - 1;
      if (left > 0) state.tagCounts.set(tag, left);
      else state.tagCounts.delete(tag);
    }
    state.meta.delete(key);
    state.index.remove(key);
  }
}
