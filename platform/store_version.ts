// The version of one key, read so that concurrent readers share gets and each
// still sees every commit that finished before its read began: a read joins
// the next get to start, never one already under way (which may predate a
// write the reader saw complete). 16 reads in flight cost about two gets.

import type { Store, StoreKey } from "./store.ts";

export class VersionReader {
  /** The get under way. */
  #checking?: Promise<string | null>;
  /** The get that starts once #checking settles, shared by the reads that arrived meanwhile. */
  #queued?: Promise<string | null>;

  constructor(
    private readonly store: Store,
    private readonly key: StoreKey,
  ) {}

  /** The key's version (null: absent), read after this call began. */
  read(): Promise<string | null> {
    const checking = this.#checking;
    if (checking === undefined) return this.#get();
    this.#queued ??= checking.then(() => {}, () => {}).then(() => {
      this.#queued = undefined;
      return this.#get();
    });
    return this.#queued;
  }

  #get(): Promise<string | null> {
    const checking = this.store.get(this.key).then((entry) =>
      entry?.version ?? null
    );
    this.#checking = checking;
    const settle = () => {
      if (this.#checking === checking) this.#checking = undefined;
    };
    checking.then(settle, settle);
    return checking;
  }
}
