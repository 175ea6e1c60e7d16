// A backend that is still opening. Loading every entry into the search
// indexes takes seconds at 100k entries; the server answers initialize and
// tools/list meanwhile, and calls that need storage wait for it.

import { ForwardingBackend, type StorageCall } from "./forwarding.ts";
import {
  getEntries,
  type MemoryBackend,
  TagsChanged,
  upsertKeepingCreated,
} from "./port.ts";
import type { BackendHealth, StorageStatus, StoredEntry } from "../model.ts";
import { messageOf } from "../../../platform/errors.ts";

export class DeferredBackend extends ForwardingBackend {
  readonly kind: string;
  readonly #opening: Promise<MemoryBackend>;
  #ready: MemoryBackend | undefined;
  #failure: string | undefined;

  constructor(kind: string, opening: Promise<MemoryBackend>) {
    super();
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

  override getMany(
    namespace: string,
    keys: readonly string[],
  ): Promise<(StoredEntry | null)[]> {
    return this.forward((b) => getEntries(b, namespace, keys));
  }

  upsertKeepingCreated(
    entry: StoredEntry,
    expectTags?: readonly string[] | null,
  ): Promise<StoredEntry | null> {
    return this.forward(async (b) => {
      if (expectTags === undefined) return await upsertKeepingCreated(b, entry);
      // A backend that cannot check the tags: the caller reads them instead.
      if (!b.upsertKeepingCreated) {
        throw new TagsChanged(entry.namespace, entry.key);
      }
      return await b.upsertKeepingCreated(entry, expectTags);
    });
  }

  /** Known once open; while it opens the caller reads them (and waits, as every storage call). */
  knownTags(
    namespace: string,
    key: string,
  ): readonly string[] | null | undefined {
    return this.#ready?.knownTags?.(namespace, key);
  }

  protected forward<R>(call: StorageCall<R>): Promise<R> {
    return this.#ready ? call(this.#ready) : this.#opening.then(call);
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

  status(): StorageStatus {
    const status = this.#ready?.status?.();
    if (status) return status;
    return {
      degraded: this.#failure !== undefined,
      queued_writes: 0,
      cache_hits: 0,
      cache_misses: 0,
    };
  }

  async close(): Promise<void> {
    const backend = await this.#opening.catch(() => undefined);
    await backend?.close();
  }
}
