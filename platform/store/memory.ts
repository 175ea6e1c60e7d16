/**
 * In-process Store for unit tests. It shares validation, limits, key order
 * and cursor format with KvStore so tests against it carry over.
 */
import {
  type Check,
  type CommitResult,
  decodeCursor,
  encodeCursor,
  entryOf,
  listLimit,
  type ListOptions,
  type ListPage,
  type Mutation,
  OperationTracker,
  prepareCommit,
  type PreparedMutation,
  type Store,
  type StoreEntry,
  type StoreKey,
  type StoreValue,
  validateKey,
} from "./mod.ts";

interface MemoryRecord {
  key: StoreKey;
  /** Serialized (serializeValue), so callers never share objects with the store. */
  bytes: Uint8Array;
  version: string;
}

export class MemoryStore implements Store {
  readonly kind = "memory";
  #records = new Map<string, MemoryRecord>();
  /** Encoded keys (see bytesToBinary) in key order. */
  #order: string[] = [];
  #counter = 0;
  #operations = new OperationTracker();

  get(key: StoreKey): Promise<StoreEntry | null> {
    return this.#operations.run(() =>
      Promise.resolve(this.#get(validateKey(key)))
    );
  }

  getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]> {
    return this.#operations.run(() => {
      const ids = keys.map((key) => validateKey(key));
      return Promise.resolve(ids.map((id) => this.#get(id)));
    });
  }

  set(key: StoreKey, value: StoreValue): Promise<string> {
    return this.#operations.run(() => {
      const { mutations } = prepareCommit({
        mutations: [{ type: "set", key, value }],
      });
      return Promise.resolve(this.#apply(mutations));
    });
  }

  delete(key: StoreKey): Promise<void> {
    return this.#operations.run(() => {
      this.#apply(
        prepareCommit({ mutations: [{ type: "delete", key }] }).mutations,
      );
      return Promise.resolve();
    });
  }

  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
    return this.#operations.run(() =>
      Promise.resolve(this.#list(prefix, options))
    );
  }

  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    return this.#operations.run(() => Promise.resolve(this.#commit(op)));
  }

  flush(): Promise<void> {
    return this.#operations.flush();
  }

  close(): Promise<void> {
    return this.#operations.close(() => {
      this.#records.clear();
      this.#order = [];
    });
  }

  #get(id: string): StoreEntry | null {
    const record = this.#records.get(id);
    return record ? toEntry(record) : null;
  }

  #commit(op: { checks?: Check[]; mutations: Mutation[] }): CommitResult {
    const prepared = prepareCommit(op);
    for (const check of prepared.checks) {
      if ((this.#records.get(check.id)?.version ?? null) !== check.version) {
        return { ok: false };
      }
    }
    return { ok: true, version: this.#apply(prepared.mutations) };
  }

  #apply(mutations: PreparedMutation[]): string {
    // Same shape as a Deno KV versionstamp: 20 hex digits, increasing.
    const version = (++this.#counter).toString(16).padStart(20, "0");
    for (const m of mutations) {
      if (m.type === "set") {
        if (!this.#records.has(m.id)) {
          this.#order.splice(this.#find(m.id), 0, m.id);
        }
        this.#records.set(m.id, { key: [...m.key], bytes: m.bytes, version });
      } else if (this.#records.delete(m.id)) {
        this.#order.splice(this.#find(m.id), 1);
      }
    }
    return version;
  }

  #list(prefix: StoreKey, options: ListOptions | undefined): ListPage {
    const prefixId = validateKey(prefix, true);
    const limit = listLimit(options);
    const after = options?.cursor === undefined
      ? null
      : prefixId + decodeCursor(options.cursor);
    const ids: string[] = [];
    if (options?.reverse) {
      // Every child key continues with a tag byte below 0xff.
      for (let i = this.#find(after ?? `${prefixId}\xff`) - 1; i >= 0; i--) {
        const id = this.#order[i];
        if (!id.startsWith(prefixId) || id === prefixId || ids.length > limit) {
          break;
        }
        ids.push(id);
      }
    } else {
      let i = this.#find(after ?? prefixId);
      if (this.#order[i] === (after ?? prefixId)) i++;
      for (; i < this.#order.length && ids.length <= limit; i++) {
        const id = this.#order[i];
        if (!id.startsWith(prefixId)) break;
        ids.push(id);
      }
    }
    const more = ids.length > limit;
    const page = ids.slice(0, limit);
    const entries: StoreEntry[] = [];
    for (const id of page) {
      const record = this.#records.get(id);
      if (record) entries.push(toEntry(record));
    }
    const last = page.at(-1);
    return {
      entries,
      cursor: more && last !== undefined
        ? encodeCursor(last.slice(prefixId.length))
        : null,
    };
  }

  /** Index of the first encoded key >= id. */
  #find(id: string): number {
    let low = 0;
    let high = this.#order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#order[mid] < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

function toEntry(record: MemoryRecord): StoreEntry {
  return entryOf([...record.key], record.bytes, record.version);
}
