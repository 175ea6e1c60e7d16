// The version of one key, read so that concurrent readers share gets and each
// still sees every commit that finished before its read began: a read joins
// the next get to start, never one already under way (which may predate a
// write the reader saw complete). 16 reads in flight cost about two gets.
//
// On a store with a change mark (a Deno KV file: platform/store/kv_change_mark.ts)
// a read makes no get at all while the mark stays what it was just before the
// last get began: no commit, by any process, has finished since, so that get's
// answer is still the key's version. Nor does it when the only commits since
// are this process's own through the same store and none wrote the key
// (Store.unchangedBetween): an agent turn's own commits (its conversation, its
// audit records) then leave the versions it reads next turn alone.

import type { Store, StoreKey } from "./mod.ts";

/**
 * Whether `key` is as it was at mark `from`, now that the store's mark is
 * `to`: no commit since, or only this process's own that left the key alone.
 * False without marks (a store that has none, or nothing read yet).
 */
export function keyUnchanged(
  store: Store,
  from: string | undefined,
  to: string | undefined,
  key: StoreKey,
): to is string {
  if (from === undefined || to === undefined) return false;
  return from === to || store.unchangedBetween?.(from, to, key) === true;
}

export class VersionReader {
  /** The get under way. */
  #checking?: Promise<string | null>;
  /** The get that starts once #checking settles, shared by the reads that arrived meanwhile. */
  #queued?: Promise<string | null>;
  /** The store's change mark read just before the last get began, and that get's answer. */
  #known?: { mark: string; version: string | null };

  constructor(
    private readonly store: Store,
    private readonly key: StoreKey,
  ) {}

  /** The key's version (null: absent), read after this call began. */
  read(): Promise<string | null> {
    const mark = this.store.changeMark?.();
    const known = this.#known;
    if (
      known !== undefined &&
      keyUnchanged(this.store, known.mark, mark, this.key)
    ) {
      if (known.mark !== mark) this.#known = { mark, version: known.version };
      return Promise.resolve(known.version);
    }
    const checking = this.#checking;
    if (checking === undefined) return this.#get(mark);
    this.#queued ??= checking.then(() => {}, () => {}).then(() => {
      this.#queued = undefined;
      return this.#get();
    });
    return this.#queued;
  }

  /** `mark`: the store's change mark, read before this get starts (a commit finishing in between changes it). */
  #get(mark = this.store.changeMark?.()): Promise<string | null> {
    const checking = this.store.get(this.key).then((entry) => {
      const version = entry?.version ?? null;
      // True whichever get ends last: its answer postdates its own mark.
      this.#known = mark === undefined ? undefined : { mark, version };
      return version;
    });
    this.#checking = checking;
    const settle = () => {
      if (this.#checking === checking) this.#checking = undefined;
    };
    checking.then(settle, settle);
    return checking;
  }
}
