// The one place that forwards every storage method of MemoryBackend to
// another backend. A wrapper (still opening, network errors translated,
// hosted with a cache) says how one call runs in `forward` and overrides only
// the methods it treats differently.

import type { MemoryBackend } from "./port.ts";
import type { BackendHealth, StoredEntry } from "../model.ts";

/** One storage call, to be run on whichever backend the wrapper picks. */
export type StorageCall<R> = (backend: MemoryBackend) => Promise<R>;

/** What a storage method of the port takes, forwarded as it comes. */
type Args<M extends keyof MemoryBackend> = MemoryBackend[M] extends
  (...args: infer A) => unknown ? A : never;

export abstract class ForwardingBackend implements MemoryBackend {
  abstract readonly kind: string;
  /** Runs one storage call on the wrapped backend. */
  protected abstract forward<R>(call: StorageCall<R>): Promise<R>;
  abstract health(): Promise<BackendHealth>;
  abstract close(): Promise<void>;

  get(...args: Args<"get">) {
    return this.forward((b) => b.get(...args));
  }
  /** One get each, as a wrapper's own get would run them; a wrapper that can pass one read through overrides it. */
  getMany(
    namespace: string,
    keys: readonly string[],
  ): Promise<(StoredEntry | null)[]> {
    return Promise.all(keys.map((key) => this.get(namespace, key)));
  }
  put(...args: Args<"put">) {
    return this.forward((b) => b.put(...args));
  }
  delete(...args: Args<"delete">) {
    return this.forward((b) => b.delete(...args));
  }
  list(...args: Args<"list">) {
    return this.forward((b) => b.list(...args));
  }
  countByNamespace() {
    return this.forward((b) => b.countByNamespace());
  }
  search(...args: Args<"search">) {
    return this.forward((b) => b.search(...args));
  }
  staleEmbeddings(...args: Args<"staleEmbeddings">) {
    return this.forward((b) => b.staleEmbeddings(...args));
  }
  setEmbedding(...args: Args<"setEmbedding">) {
    return this.forward((b) => b.setEmbedding(...args));
  }
  appendMessages(...args: Args<"appendMessages">) {
    return this.forward((b) => b.appendMessages(...args));
  }
  history(...args: Args<"history">) {
    return this.forward((b) => b.history(...args));
  }
  sessions(...args: Args<"sessions">) {
    return this.forward((b) => b.sessions(...args));
  }
}
