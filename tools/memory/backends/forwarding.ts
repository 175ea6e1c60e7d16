// The one place that forwards every storage method of MemoryBackend to
// another backend. A wrapper (still opening, network errors translated,
// hosted with a cache) says how one call runs in `forward` and overrides only
// the methods it treats differently.

import type { ListQuery, MemoryBackend } from "./port.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  Rankings,
  SearchQuery,
  StoredEntry,
} from "../model.ts";

/** One storage call, to be run on whichever backend the wrapper picks. */
export type StorageCall<R> = (backend: MemoryBackend) => Promise<R>;

export abstract class ForwardingBackend implements MemoryBackend {
  abstract readonly kind: string;
  /** Runs one storage call on the wrapped backend. */
  protected abstract forward<R>(call: StorageCall<R>): Promise<R>;
  abstract health(): Promise<BackendHealth>;
  abstract close(): Promise<void>;

  get(namespace: string, key: string): Promise<StoredEntry | null> {
    return this.forward((b) => b.get(namespace, key));
  }
  /** One get each, as a wrapper's own get would run them; a wrapper that can pass one read through overrides it. */
  getMany(
    namespace: string,
    keys: readonly string[],
  ): Promise<(StoredEntry | null)[]> {
    return Promise.all(keys.map((key) => this.get(namespace, key)));
  }
  put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    return this.forward((b) => b.put(entry, mode));
  }
  delete(namespace: string, key: string): Promise<boolean> {
    return this.forward((b) => b.delete(namespace, key));
  }
  list(namespace: string, query: ListQuery): Promise<EntryPage> {
    return this.forward((b) => b.list(namespace, query));
  }
  countByNamespace(): Promise<Record<string, number>> {
    return this.forward((b) => b.countByNamespace());
  }
  search(namespace: string, query: SearchQuery): Promise<Rankings> {
    return this.forward((b) => b.search(namespace, query));
  }
  staleEmbeddings(embedder: string, limit: number): Promise<StoredEntry[]> {
    return this.forward((b) => b.staleEmbeddings(embedder, limit));
  }
  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void> {
    return this.forward((b) =>
      b.setEmbedding(namespace, key, updatedAt, embedding)
    );
  }
  appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    return this.forward((b) =>
      b.appendMessages(namespace, sessionId, messages)
    );
  }
  history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return this.forward((b) => b.history(namespace, sessionId, limit));
  }
  sessions(namespace: string): Promise<string[]> {
    return this.forward((b) => b.sessions(namespace));
  }
}
