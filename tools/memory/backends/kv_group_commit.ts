// Group commit for KvBackend: writes that arrive while a commit is in flight
// are planned together and written in one atomic Store commit. Each caller's
// promise settles only after the commit holding its write succeeded, so an
// acknowledged write is on disk; a failed commit acknowledges none of them.
//
// A batch's first attempt reads only the keys it cannot vouch for: the values
// this process last committed (or read) are kept for a while, and a writer
// may name keys it believes absent (an entry its index does not hold). Every
// key is still checked at the commit, so a wrong belief (another process
// wrote meanwhile) only fails that commit, and the next attempt reads all.
// A lone writer (one client waiting for each answer) then makes one Store
// call per write, its commit, instead of a read and a commit.

import {
  type Check,
  MAX_COMMIT_KEY_BYTES,
  MAX_COMMIT_KEYS,
  type Mutation,
  type Store,
  type StoreKey,
  type StoreValue,
  validateKey,
} from "../../../platform/store/mod.ts";
import { MAX_ATTEMPTS } from "./kv_records.ts";

/** What a write sees: the stored values of the keys it reads, as updated by earlier writes of its batch. */
export class BatchView {
  #values = new Map<string, StoreValue | null>();
  #versions = new Map<string, string | null>();

  /** The value of a key (null: absent). Only keys the write declared are readable. */
  get(key: StoreKey): StoreValue | null {
    const id = keyId(key);
    if (!this.#values.has(id)) {
      throw new Error(`Group commit: key ${id} was not declared`);
    }
    return this.#values.get(id) ?? null;
  }

  /** Whether the key was read for this batch. */
  knows(key: StoreKey): boolean {
    return this.#values.has(keyId(key));
  }

  /** The version the key was read at (null: absent). */
  versionOf(key: StoreKey): string | null {
    return this.#versions.get(keyId(key)) ?? null;
  }

  load(
    key: StoreKey,
    value: StoreValue | null,
    version: string | null,
  ): void {
    const id = keyId(key);
    if (this.#versions.has(id)) return;
    this.#values.set(id, value);
    this.#versions.set(id, version);
  }

  apply(mutation: Mutation): void {
    this.#values.set(
      keyId(mutation.key),
      mutation.type === "set" ? mutation.value : null,
    );
  }

  /** One check per key read by the committed writes: none may have changed since (another process sharing the store). */
  checks(reads: Iterable<StoreKey>): Check[] {
    const checks = new Map<string, Check>();
    for (const key of reads) {
      const id = keyId(key);
      checks.set(id, { key, version: this.#versions.get(id) ?? null });
    }
    return [...checks.values()];
  }
}

/** A write's plan: its result, its mutations and what to do in memory once committed. */
export interface Plan<T> {
  result: T;
  mutations: Mutation[];
  applied?: () => void;
}

export interface GroupWrite<T> {
  /** Keys the write reads (they are checked at commit). */
  reads: StoreKey[];
  /**
   * Whether the writer believes this key of `reads` absent now (asked when
   * its batch is planned): then it is not read; the commit checks it absent.
   */
  absent?(key: StoreKey): boolean;
  /** Plans against the batch view; throwing refuses this write alone. */
  plan(view: BatchView): Plan<T>;
}

interface Pending {
  write: GroupWrite<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Planned {
  pending: Pending;
  plan: Plan<unknown>;
}

/** Keys whose last committed value is kept, and the largest value kept. */
const KNOWN_KEYS = 1024;
const KNOWN_VALUE_BYTES = 4096;

/** A key's value and version as this process last committed or read it. */
interface Known {
  value: StoreValue | null;
  version: string | null;
}

export class GroupCommit {
  #store: Store;
  #queue: Pending[] = [];
  #running: Promise<void> | null = null;
  /** Key id -> its value as of this process's last commit of it, most recent last. */
  #known = new Map<string, Known>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Queues a write; resolves with its result once committed. */
  write<T>(write: GroupWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // A bad key must fail its own write, not the batch's read.
      for (const key of write.reads) validateKey(key);
      this.#queue.push({
        write,
        resolve: (value) => resolve(value as T),
        reject,
      });
      this.#running ??= this.#drain();
    });
  }

  /** Drops what is kept of `key`: it was written outside the group commit. */
  forget(key: StoreKey): void {
    this.#known.delete(keyId(key));
  }

  /** Resolves when every write queued so far has settled. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#queue.length);
        await this.#commitAll(batch);
      }
    } finally {
      // Cleared in the same turn as the last empty-queue check, so no write is left waiting.
      this.#running = null;
    }
  }

  /** Commits `batch` in as few commits as the Store's key limit allows. */
  async #commitAll(batch: Pending[]): Promise<void> {
    let rest = batch;
    while (rest.length > 0) {
      rest = await this.#commitSome(rest);
    }
  }

  /** Commits a prefix of `batch`; returns the writes left for the next commit. */
  async #commitSome(batch: Pending[]): Promise<Pending[]> {
    // After a failed check or a refusal planned on kept values, read everything.
    let fresh = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const view = new BatchView();
      // Each key once (every write of a namespace reads its counter); reads
      // beyond one commit's worth are wasted, the limit keeps them bounded.
      const reads = new Map<string, StoreKey>();
      /** Keys taken as kept or absent, not read. */
      const vouched = new Set<string>();
      for (const p of batch) {
        for (const key of p.write.reads) {
          const id = keyId(key);
          if (reads.has(id)) continue;
          reads.set(id, key);
          const known = fresh ? undefined : this.#known.get(id);
          if (known) {
            view.load(key, known.value, known.version);
            vouched.add(id);
          } else if (!fresh && p.write.absent?.(key) === true) {
            view.load(key, null, null);
            vouched.add(id);
          }
        }
        if (reads.size >= MAX_COMMIT_KEYS) break;
      }
      const limited = [...reads].filter(([id]) => !vouched.has(id)).map((
        [, key],
      ) => key);
      if (limited.length > 0) {
        let records;
        try {
          records = await this.#store.getMany(limited);
        } catch (error) {
          for (const p of batch) p.reject(error);
          return [];
        }
        for (const [i, record] of records.entries()) {
          view.load(
            limited[i],
            record?.bytes ?? record?.value ?? null,
            record?.version ?? null,
          );
        }
      }
      const planned: Planned[] = [];
      const refused: { pending: Pending; error: unknown }[] = [];
      // Keys the taken writes touch, and the encoded sizes of those they
      // mutate: kept as running totals, each write adding only its own keys.
      const touched = new Set<string>();
      const mutated = new Map<string, number>();
      let mutatedBytes = 0;
      let taken = 0;
      let doubt = false;
      for (const pending of batch) {
        if (pending.write.reads.some((key) => !view.knows(key))) break;
        const added = new Set<string>();
        for (const key of pending.write.reads) {
          const id = keyId(key);
          if (!touched.has(id)) added.add(id);
        }
        if (touched.size + added.size > MAX_COMMIT_KEYS && taken > 0) break;
        let plan: Plan<unknown>;
        try {
          plan = pending.write.plan(view);
        } catch (error) {
          // Refused on a kept value: it may be stale, so read before refusing.
          if (pending.write.reads.some((key) => vouched.has(keyId(key)))) {
            doubt = true;
            break;
          }
          refused.push({ pending, error });
          taken++;
          continue;
        }
        const sizes = new Map<string, number>();
        let bytes = mutatedBytes;
        for (const m of plan.mutations) {
          const id = keyId(m.key);
          if (!touched.has(id)) added.add(id);
          if (!mutated.has(id) && !sizes.has(id)) {
            const size = keyBytes(m.key);
            sizes.set(id, size);
            bytes += size;
          }
        }
        if (
          (touched.size + added.size > MAX_COMMIT_KEYS ||
            bytes > MAX_COMMIT_KEY_BYTES) &&
          taken > 0
        ) break;
        for (const id of added) touched.add(id);
        for (const [id, size] of sizes) mutated.set(id, size);
        mutatedBytes = bytes;
        for (const m of plan.mutations) view.apply(m);
        planned.push({ pending, plan });
        taken++;
      }
      const mutations = lastPerKey(planned.flatMap((p) => p.plan.mutations));
      const checked = planned.flatMap((p) => p.pending.write.reads);
      // Nothing to commit checks nothing: an answer from kept values (say "no
      // such entry" to a delete) must come from a read.
      if (
        doubt ||
        (mutations.length === 0 &&
          checked.some((key) => vouched.has(keyId(key))))
      ) {
        fresh = true;
        continue;
      }
      if (mutations.length > 0) {
        let result;
        try {
          result = await this.#store.commit({
            checks: view.checks(checked),
            mutations,
          });
        } catch (error) {
          for (const key of checked) this.forget(key);
          if (planned.length === 1) {
            planned[0].pending.reject(error);
          } else {
            // One bad write must not sink the others: commit them one by one.
            for (const p of planned) await this.#commitAll([p.pending]);
          }
          for (const r of refused) r.pending.reject(r.error);
          return batch.slice(taken);
        }
        if (!result.ok) {
          // Another process changed a key read (or one believed absent): read again.
          for (const key of checked) this.forget(key);
          fresh = true;
          continue;
        }
        this.#remember(view, checked, mutations, result.version);
      }
      for (const p of planned) {
        p.plan.applied?.();
        p.pending.resolve(p.plan.result);
      }
      for (const r of refused) r.pending.reject(r.error);
      return batch.slice(taken);
    }
    const error = new Error(
      "Could not write: the entries kept changing concurrently; try again",
    );
    for (const p of batch) p.reject(error);
    return [];
  }

  /** Keeps the committed value of each key the commit checked (small values, the most recent keys). */
  #remember(
    view: BatchView,
    checked: readonly StoreKey[],
    mutations: readonly Mutation[],
    version: string,
  ): void {
    // The last mutation of each key (lastPerKey): a set is at `version`, a delete absent.
    const written = new Map(mutations.map((m) => [keyId(m.key), m.type]));
    for (const key of checked) {
      const id = keyId(key);
      const value = view.get(key);
      this.#known.delete(id);
      if (sizeOf(value) > KNOWN_VALUE_BYTES) continue;
      const type = written.get(id);
      this.#known.set(id, {
        value,
        version: type === undefined
          ? view.versionOf(key)
          : type === "set"
          ? version
          : null,
      });
    }
    for (const id of this.#known.keys()) {
      if (this.#known.size <= KNOWN_KEYS) break;
      this.#known.delete(id);
    }
  }
}

/** About a value's stored size in bytes. */
function sizeOf(value: StoreValue | null): number {
  if (value instanceof Uint8Array) return value.length;
  if (value === null || typeof value !== "object") {
    return typeof value === "string" ? value.length * 3 : 8;
  }
  return JSON.stringify(value).length * 3;
}

/** The last mutation of each key, in first-touch order (a batch may write a counter many times). */
function lastPerKey(mutations: Mutation[]): Mutation[] {
  const byKey = new Map<string, Mutation>();
  for (const m of mutations) {
    const id = keyId(m.key);
    byKey.delete(id);
    byKey.set(id, m);
  }
  return [...byKey.values()];
}

/** Encoded size, as the Store counts it against MAX_COMMIT_KEY_BYTES; invalid keys fail at commit. */
function keyBytes(key: StoreKey): number {
  try {
    return validateKey(key).length;
  } catch {
    return 0;
  }
}

/** Ids of the keys of writes in flight: a write's keys are asked for many times. */
const ids = new WeakMap<StoreKey, string>();

function keyId(key: StoreKey): string {
  let id = ids.get(key);
  if (id === undefined) ids.set(key, id = JSON.stringify(key));
  return id;
}
