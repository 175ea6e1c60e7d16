// An in-process view of one kind of record (agents or teams) that stays
// exact across daemons sharing a store: every create and delete also sets
// ["catalog_version", kind] in the same commit, and a read compares that key's
// version (one get) with the view's before answering from memory. A changed
// version rebuilds the view from a full listing; nothing is listed or parsed
// per request otherwise. Works on any Store: no watch, no coordination.
//
// Reads in flight together share version gets (platform/store/version.ts),
// each still seeing every commit that finished before it began; on a Deno KV
// file a read makes no get while no commit has finished since the last one
// (the store's change mark, platform/store/kv_change_mark.ts).

import type {
  JsonValue,
  Mutation,
  Store,
  StoreKey,
} from "../platform/store/mod.ts";
import { MAX_LIST_LIMIT } from "../platform/store/mod.ts";
import { VersionReader } from "../platform/store/version.ts";
import { nameKey } from "./schemas.ts";

interface Snapshot<T> {
  version: string | null;
  /** In key (= id = creation) order, as the store lists them. */
  records: T[];
  /** Every record as one page, shared by every read of this version (read-only). */
  page: { data: T[]; next_cursor: null };
  byId: Map<string, T>;
  byName: Map<string, T>;
}

/** Above this many records the view is not kept: reads go to the store. */
const MAX_VIEW_RECORDS = 10_000;

/** The entity tag of each view's page: one per build, unique across restarts. */
const pageTags = new WeakMap<object, string>();
const BOOT = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
let built = 0;

/** The ETag (quoted) of a page the views hand out; undefined for any other object. */
export function pageTag(page: object): string | undefined {
  return pageTags.get(page);
}

export class CatalogView<T extends { id: string; name: string }> {
  #snapshot?: Snapshot<T>;
  #building?: {
    version: string | null;
    done: Promise<Snapshot<T> | undefined>;
  };
  readonly #version: VersionReader;

  constructor(
    private readonly store: Store,
    private readonly kind: string,
    private readonly parse: (value: JsonValue) => T,
  ) {
    this.#version = new VersionReader(store, this.#versionKey());
  }

  /** The mutation every commit that creates or deletes a record of this kind carries. */
  bump(): Mutation {
    return { type: "set", key: this.#versionKey(), value: crypto.randomUUID() };
  }

  /** The current records, or undefined when there are too many to keep. */
  async current(): Promise<Snapshot<T> | undefined> {
    const version = await this.#version.read();
    if (this.#snapshot?.version === version) return this.#snapshot;
    // Requests arriving during a rebuild of the same version share it.
    if (this.#building?.version === version) return await this.#building.done;
    const done = this.#build(version);
    this.#building = { version, done };
    try {
      const snapshot = await done;
      // A slower rebuild of an older version must not replace a newer one.
      if (this.#building?.done === done) this.#snapshot = snapshot;
      return snapshot;
    } finally {
      if (this.#building?.done === done) this.#building = undefined;
    }
  }

  /** Lists after reading the version: a write in between only makes the next read rebuild again. */
  async #build(version: string | null): Promise<Snapshot<T> | undefined> {
    const records: T[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list([this.kind], {
        limit: MAX_LIST_LIMIT,
        cursor,
      });
      for (const entry of page.entries) records.push(this.parse(entry.value));
      if (records.length > MAX_VIEW_RECORDS) return undefined;
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    const page = Object.freeze({ data: [...records], next_cursor: null });
    pageTags.set(page, `"${BOOT}-${++built}"`);
    return {
      version,
      records,
      page,
      byId: new Map(records.map((record) => [record.id, record])),
      byName: new Map(records.map((record) => [nameKey(record.name), record])),
    };
  }

  #versionKey(): StoreKey {
    return ["catalog_version", this.kind];
  }
}
