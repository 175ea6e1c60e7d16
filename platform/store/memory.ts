/**
 * In-process Store for unit tests. It shares validation, limits, key order
 * and cursor format with KvStore so tests against it carry over.
 */
import type * as port from "./mod.ts";
import {
  CommitRiders,
  entryOf,
  listRange,
  OperationTracker,
  pageOf,
  prepareCommit,
  validateKey,
} from "./mod.ts";

interface MemoryRecord {
  key: port.StoreKey;
  /** Serialized (serializeValue), so callers never share objects with the store. */
  bytes: Uint8Array;
  version: string;
}

export class MemoryStore implements port.Store {
  readonly kind = "memory";
  #records = new Map<string, MemoryRecord>();
  /** Encoded keys (see bytesToBinary) in key order. */
  #order: string[] = [];
  #counter = 0;
  #operations = new OperationTracker();
  #riders = new CommitRiders();

  get(key: port.StoreKey): Promise<port.StoreEntry | null> {
    return this.#operations.run(() =>
      Promise.resolve(this.#get(validateKey(key)))
    );
  }

  getMany(keys: readonly port.StoreKey[]): Promise<(port.StoreEntry | null)[]> {
    return this.#operations.run(() => {
      const ids = keys.map((key) => validateKey(key));
      return Promise.resolve(ids.map((id) => this.#get(id)));
    });
  }

  set(key: port.StoreKey, value: port.StoreValue): Promise<string> {
    return this.#operations.run(() => {
      const { mutations } = prepareCommit({
        mutations: [{ type: "set", key, value }],
      });
      return Promise.resolve(this.#apply(mutations));
    });
  }

  delete(key: port.StoreKey): Promise<void> {
    return this.#operations.run(() => {
      this.#apply(
        prepareCommit({ mutations: [{ type: "delete", key }] }).mutations,
      );
      return Promise.resolve();
    });
  }

  list(
    prefix: port.StoreKey,
    options?: port.ListOptions,
  ): Promise<port.ListPage> {
    return this.#operations.run(() =>
      Promise.resolve(this.#list(prefix, options))
    );
  }

  commit(
    op: { checks?: port.Check[]; mutations: port.Mutation[] },
  ): Promise<port.CommitResult> {
    return this.#operations.run(() => Promise.resolve(this.#commit(op)));
  }

  addCommitRider(rider: port.CommitRider): () => void {
    return this.#riders.add(rider);
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

  #get(id: string): port.StoreEntry | null {
    const record = this.#records.get(id);
    return record ? toEntry(record) : null;
  }

  #commit(
    op: { checks?: port.Check[]; mutations: port.Mutation[] },
  ): port.CommitResult {
    const prepared = prepareCommit(op);
    const landed = this.#riders.board(prepared);
    for (const check of prepared.checks) {
      if ((this.#records.get(check.id)?.version ?? null) !== check.version) {
        landed(false);
        return { ok: false };
      }
    }
    const version = this.#apply(prepared.mutations);
    landed(true);
    return { ok: true, version };
  }

  #apply(mutations: port.PreparedMutation[]): string {
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

  #list(
    prefix: port.StoreKey,
    options: port.ListOptions | undefined,
  ): port.ListPage {
    const range = listRange(prefix, options);
    const { prefixId, limit, after } = range;
    const ids: string[] = [];
    if (range.reverse) {
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
    const page = pageOf(range, ids, (id) => id);
    const entries: port.StoreEntry[] = [];
    for (const id of page.rows) {
      const record = this.#records.get(id);
      if (record) entries.push(toEntry(record));
    }
    return { entries, cursor: page.cursor };
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

function toEntry(record: MemoryRecord): port.StoreEntry {
  return entryOf([...record.key], record.bytes, record.version);
}
