// A backend that is still opening. Loading every entry into the search
// indexes takes seconds at 100k entries; the server answers initialize and
// tools/list meanwhile, and calls that need storage wait for it.

import type { ListQuery, MemoryBackend } from "./backend.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  Rankings,
  SearchQuery,
  StoredEntry,
} from "./model.ts";
import { messageOf } from "../../platform/errors.ts";

export class DeferredBackend implements MemoryBackend {
  readonly kind: string;
  readonly #opening: Promise<MemoryBackend>;
  #ready: MemoryBackend | undefined;
  #failure: string | undefined;

  constructor(kind: string, opening: Promise<MemoryBackend>) {
    this.kind = kind;
    this.#opening = opening.then(
      (backend) => this.#ready = backend,
      (error) => {
        this.#failure = messageOf(error);
        throw error;
      },
    );
    this.#opening.catch(() => {}); // reported by health() and by every call
  }

  /** Resolves once open (or rejects with why it could not open). */
  ready(): Promise<MemoryBackend> {
    return this.#opening;
  }

  #use<T>(run: (backend: MemoryBackend) => Promise<T>): Promise<T> {
    return this.#ready ? run(this.#ready) : this.#opening.then(run);
  }

  get(namespace: string, key: string): Promise<StoredEntry | null> {
    return this.#use((b) => b.get(namespace, key));
  }
  put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    return this.#use((b) => b.put(entry, mode));
  }
  delete(namespace: string, key: string): Promise<boolean> {
    return this.#use((b) => b.delete(namespace, key));
  }
  list(namespace: string, query: ListQuery): Promise<EntryPage> {
    return this.#use((b) => b.list(namespace, query));
  }
  countByNamespace(): Promise<Record<string, number>> {
    return this.#use((b) => b.countByNamespace());
  }
  search(namespace: string, query: SearchQuery): Promise<Rankings> {
    return this.#use((b) => b.search(namespace, query));
  }
  staleEmbeddings(embedder: string, limit: number): Promise<StoredEntry[]> {
    return this.#use((b) => b.staleEmbeddings(embedder, limit));
  }
  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void> {
    return this.#use((b) =>
      b.setEmbedding(namespace, key, updatedAt, embedding)
    );
  }
  appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    return this.#use((b) => b.appendMessages(namespace, sessionId, messages));
  }
  history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return this.#use((b) => b.history(namespace, sessionId, limit));
  }
  sessions(namespace: string): Promise<string[]> {
    return this.#use((b) => b.sessions(namespace));
  }

  health(): Promise<BackendHealth> {
    if (this.#ready) return this.#ready.health();
    if (this.#failure !== undefined) {
      return Promise.resolve({
        status: "down",
        detail: `Cannot open the store: ${this.#failure}`,
      });
    }
    return Promise.resolve({
      status: "ok",
      detail: "loading entries into the search index",
    });
  }

  async close(): Promise<void> {
    const backend = await this.#opening.catch(() => undefined);
    await backend?.close();
  }
}
