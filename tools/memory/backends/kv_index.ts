// Persisted search indexes of KvBackend: per namespace a snapshot of its
// SearchIndex (binary, index_snapshot.ts) in a few large values, and a
// journal of the keys written since, so a start reads a few values per
// namespace instead of re-tokenising and re-embedding every entry.
//
// The entries' text, tags and times stay the truth and the lexical index is a
// cache; each vector is stored once, in the journal row of the write that made
// it until a snapshot holds it (entry records carry none, entry_codec.ts).
// Every entry write commits its journal row in the same atomic commit
// (KvBackend.put/delete/setEmbedding), and a snapshot's journal rows are
// deleted only after its head is swapped, so whatever crashes when, snapshot
// + journal replay equal the entries and their vectors. A snapshot that is
// damaged, truncated, or of another format or tokenizer is rebuilt from the
// entries, taking the vectors from the journal, from JSON records of earlier
// versions (which carry theirs), or from the old snapshot when it still
// decodes; an entry whose vector is nowhere is re-embedded by the
// re-embedding job. Vectors are kept per embedder id, so a change of embedder
// needs no rebuild: the re-embedding job's writes carry the new vectors.
//
// Layout (beside kv_records.ts's):
//   ["x", ns]             head of the saved snapshot (kv_index_snapshots.ts)
//   ["y", ns, id, i]      part i of snapshot `id` (kv_index_parts.ts, binary)
//   ["y", ns, id, "r", k, i]  part i of the vector rows of slab k, written by
//                         snapshot `id` and kept while a later head refers to it
//   ["j", ns, key]        journal: the last write of `key` not yet in a snapshot
//                         (its id and vector, entry_codec.ts; format 2: the id)

import type { Logger } from "../../../platform/log.ts";
import { messageOf } from "../../../platform/errors.ts";
import type {
  Mutation,
  Store,
  StoreEntry,
  StoreKey,
  StoreValue,
} from "../../../platform/store/mod.ts";
import { join } from "node:path";
import { type IndexData, SearchIndex } from "../search_index.ts";
import { BATCH, type PartRef, SnapshotReadFailed } from "./kv_index_parts.ts";
import type { Embedding, StoredEntry } from "../model.ts";
import { listAll, tryDecode, valueOf } from "./kv_records.ts";
import { encodeJournal } from "./entry_codec.ts";
import {
  indexEntry,
  type Namespace,
  type NamespaceIndexes,
} from "./kv_namespaces.ts";
import {
  dropJournal,
  type Journaled,
  readJournals,
  withVector,
} from "./kv_index_journal.ts";
import {
  dropParts,
  indexOf,
  kept,
  parseHead,
  readSnapshot,
  rowPartsOf,
  writeSnapshot,
} from "./kv_index_snapshots.ts";
import { imageName, readIndexImage, writeIndexImage } from "../index_image.ts";

/** Journal rows that make a background save: max(MIN, entries × RATIO). */
const SAVE_MIN = 1000;
const SAVE_RATIO = 0.25;
/** At close, fewer pending rows than this are left to replay (unless no snapshot exists). */
const CLOSE_MIN = 100;
/** A rebuilt namespace this large is saved right after the start. */
const REBUILD_SAVE_MIN = 1000;
const PROCESS = crypto.randomUUID().slice(0, 8);
let writes = 0;

/** A write's journal id, unique across processes sharing the store. */
export function newWriteId(): string {
  return `${PROCESS}.${(writes++).toString(36)}`;
}

/** The journal row of a write: its id and the vector it indexed (null for a delete or none). */
export function journalMutation(
  namespace: string,
  key: string,
  writeId: string,
  embedding: Embedding | null,
): Mutation {
  return {
    type: "set",
    key: ["j", namespace, key],
    value: encodeJournal(writeId, embedding),
    // Small, and written only with its entry, whose check guards it: the
    // Store need not read the row it replaces (a snapshot's delete checks it).
    newKey: true,
  };
}

/** How the indexes came to be at start (the `memory_index_loaded` log line). */
export interface LoadReport {
  namespaces: number;
  entries: number;
  /** Namespaces read from a snapshot. */
  loaded: number;
  /** Namespaces rebuilt from their entries. */
  rebuilt: number;
  /** Journal rows replayed over snapshots. */
  replayed: number;
  /** Namespaces of `loaded` read from a local index image (index_image.ts), not the store's parts. */
  images: number;
}

export interface IndexStoreOptions {
  logger?: Logger;
  /**
   * A directory for index images: local copies of the snapshots, which a
   * start reads instead of the store's parts when they are of the head.
   */
  images?: string;
}

export class IndexStore {
  #store: Store;
  #indexes: NamespaceIndexes;
  #logger?: Logger;
  /** The head version this process last read or wrote, per namespace. */
  #heads = new Map<string, string | null>();
  /** The row parts of the head this process last read or wrote, per namespace. */
  #rowParts = new Map<string, PartRef[][]>();
  /** The snapshot id (the head's `id`) this process last read or wrote, per namespace. */
  #snapshotIds = new Map<string, string>();
  /** Namespaces another process saved: only a restart may save them again. */
  #foreign = new Set<string>();
  #queue = new Set<string>();
  #saving: Promise<void> | null = null;
  #closed = false;
  #images?: string;
  /** Image writes under way (after a save, or after a start read the store's parts). */
  #imaging: Promise<void> = Promise.resolve();

  constructor(
    store: Store,
    indexes: NamespaceIndexes,
    options: IndexStoreOptions = {},
  ) {
    this.#store = store;
    this.#indexes = indexes;
    this.#logger = options.logger;
    this.#images = options.images;
    indexes.onChange = (namespace) => this.#consider(namespace);
  }

  async load(): Promise<LoadReport> {
    const names = new Set<string>();
    // The heads as listed: each namespace's load starts from its head, read once.
    const heads = new Map<string, StoreEntry>();
    for (const prefix of ["x", "n"]) {
      for await (const record of listAll(this.#store, [prefix])) {
        const namespace = record.key[1];
        if (typeof namespace !== "string") continue;
        names.add(namespace);
        if (prefix === "x") heads.set(namespace, record);
      }
    }
    const journals = await readJournals(this.#store);
    // No snapshot at all (a store from before them): one pass over every entry, as before.
    const built = heads.size === 0
      ? await this.#rebuildAll(["e"], (namespace) => journals.get(namespace))
      : new Map<string, SearchIndex>();
    for (const namespace of built.keys()) names.add(namespace);
    const report: LoadReport = {
      namespaces: 0,
      entries: 0,
      loaded: 0,
      rebuilt: 0,
      replayed: 0,
      images: 0,
    };
    for (const namespace of names) {
      const { state, loaded, replayed, image } = await this.#load(
        namespace,
        built.get(namespace),
        heads.get(namespace),
        journals.get(namespace) ?? new Map(),
      );
      if (state.index.size === 0 && state.pending.size === 0) continue;
      this.#indexes.set(namespace, state);
      report.namespaces++;
      report.entries += state.index.size;
      report.replayed += replayed;
      if (loaded) report.loaded++;
      else report.rebuilt++;
      if (image === "read") report.images++;
      // Read from the store's parts: the next start reads an image instead.
      if (image === "missing") {
        const id = this.#snapshotIds.get(namespace);
        if (id) this.#image(namespace, id, () => state.index.export());
      }
      if (
        (!loaded && state.index.size >= REBUILD_SAVE_MIN) ||
        state.pending.size >= threshold(state)
      ) this.#schedule(namespace);
    }
    return report;
  }

  /** Waits for a running save, then saves what a restart would otherwise replay at length. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#saving;
    await this.#imaging;
    for (const [namespace, state] of this.#indexes.entries()) {
      const pending = state.pending.size;
      const unsaved = (this.#heads.get(namespace) ?? null) === null;
      if (pending >= CLOSE_MIN || (pending > 0 && unsaved)) {
        await this.#trySave(namespace);
      }
    }
    await this.#imaging;
  }

  /** Resolves when no background save is running. */
  async settled(): Promise<void> {
    while (this.#saving) await this.#saving;
    await this.#imaging;
  }

  /**
   * Saves `namespace`'s index as a new snapshot and drops the journal rows it
   * covers. Returns false when another process saved one meanwhile.
   */
  async save(namespace: string): Promise<boolean> {
    const state = this.#indexes.get(namespace);
    if (!state || this.#foreign.has(namespace)) return false;
    const started = performance.now();
    const known = this.#heads.get(namespace) ?? null;
    // Taken now, with the index as it is now: later writes stay pending.
    const captured = state.pending;
    state.pending = new Map();
    const data = state.index.export();
    const restore = () => {
      for (const [key, id] of captured) {
        if (!state.pending.has(key)) state.pending.set(key, id);
      }
    };
    try {
      const head = await writeSnapshot(
        this.#store,
        namespace,
        data,
        this.#rowParts.get(namespace) ?? [],
      );
      const result = await this.#store.commit({
        checks: [{ key: ["x", namespace], version: known }],
        mutations: [{ type: "set", key: ["x", namespace], value: head }],
      });
      if (!result.ok) {
        // Another process saved its own index: keeping our journal rows keeps the store right.
        this.#foreign.add(namespace);
        restore();
        await dropParts(this.#store, namespace, (key) => key[2] === head.id);
        this.#logger?.info("memory_index_not_saved", {
          namespace,
          reason: "another process saved this namespace's index",
        });
        return false;
      }
      this.#heads.set(namespace, result.version);
      this.#rowParts.set(namespace, head.row_parts);
      this.#snapshotIds.set(namespace, head.id);
      this.#image(namespace, head.id, () => data);
      await dropJournal(this.#store, namespace, captured);
      await dropParts(this.#store, namespace, (key) => !kept(head, key));
      this.#logger?.info("memory_index_saved", {
        namespace,
        entries: head.entries,
        bytes: head.bytes,
        parts: head.parts,
        ms: Math.round(performance.now() - started),
      });
      return true;
    } catch (error) {
      restore();
      throw error;
    }
  }

  async #load(
    namespace: string,
    built: SearchIndex | undefined,
    listed: StoreEntry | undefined,
    journal: Map<string, Journaled>,
  ): Promise<
    {
      state: Namespace;
      loaded: boolean;
      replayed: number;
      /** read: from an image; missing: from the store's parts, with no image of them. */
      image?: "read" | "missing";
    }
  > {
    const head = built ? null : listed;
    this.#heads.set(namespace, head?.version ?? null);
    let index: SearchIndex | null = null;
    let salvaged: SearchIndex | null = null;
    let image: "read" | "missing" | undefined;
    if (head) {
      const fromImage = await this.#fromImage(namespace, head.value);
      if (fromImage) {
        index = fromImage;
        image = "read";
      }
    }
    if (head && !index) {
      try {
        const read = await readSnapshot(
          this.#store,
          namespace,
          head.value,
          true,
        );
        index = read.index;
        if (read.rowParts) this.#rowParts.set(namespace, read.rowParts);
        if (this.#images) image = "missing";
      } catch (error) {
        // A failing store is no damaged snapshot: rebuilding would lose its vectors.
        if (error instanceof SnapshotReadFailed) throw error.cause;
        this.#logger?.info("memory_index_rebuilt", {
          namespace,
          reason: messageOf(error),
        });
        // Its vectors may still be good (say, another tokenizer): the only copy of most of them.
        salvaged = await readSnapshot(this.#store, namespace, head.value, false)
          .then((read) => read.index, (failure) => {
            if (failure instanceof SnapshotReadFailed) throw failure.cause;
            return null;
          });
      }
    }
    const loaded = index !== null;
    if (!index) {
      index = built ?? await this.#rebuild(namespace, journal, salvaged);
    }
    salvaged = null;
    const state: Namespace = { index, pending: new Map() };
    const rows = [...journal];
    if (loaded) {
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH);
        const records = await this.#store.getMany(
          batch.map(([key]) => ["e", namespace, key]),
        );
        records.forEach((record, j) => {
          const [key, written] = batch[j];
          const entry = record &&
            this.#decode(namespace, key, valueOf(record));
          if (!entry) return index.remove(key);
          indexEntry(index, withVector(entry, written));
        });
      }
    }
    for (const [key, written] of rows) state.pending.set(key, written.id);
    return { state, loaded, replayed: loaded ? rows.length : 0, image };
  }

  /**
   * The index of the head `value` names, from this namespace's image when it
   * is an image of that snapshot and whole; else null (the store's parts are
   * read instead, and a head this code cannot read is rebuilt there).
   */
  async #fromImage(
    namespace: string,
    value: unknown,
  ): Promise<SearchIndex | null> {
    if (!this.#images) return null;
    let head;
    try {
      head = parseHead(value, true);
    } catch {
      return null;
    }
    this.#snapshotIds.set(namespace, head.id);
    const read = await readIndexImage(
      join(this.#images, imageName(namespace)),
      head.id,
      namespace,
      (data) => indexOf(head, data),
    );
    const problem = read.problem;
    if (read.value) {
      const rowParts = rowPartsOf(head);
      if (rowParts) this.#rowParts.set(namespace, rowParts);
      return read.value;
    }
    if (problem !== "no image") {
      this.#logger?.info("memory_index_image_unused", {
        namespace,
        reason: problem,
      });
    }
    return null;
  }

  /**
   * Writes the image of snapshot `id` of `namespace` in the background
   * (after the writes already queued). `data` is the snapshot's export, or
   * the index loaded from it with the journal replayed: replaying the
   * journal again over that at the next start gives the same index.
   */
  #image(namespace: string, id: string, data: () => IndexData): void {
    const dir = this.#images;
    if (!dir) return;
    this.#imaging = this.#imaging.then(async () => {
      // Another save of this namespace since: its image is the one to write.
      if (this.#snapshotIds.get(namespace) !== id) return;
      try {
        await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
        await writeIndexImage(
          join(dir, imageName(namespace)),
          id,
          namespace,
          data(),
        );
      } catch (error) {
        // Only the next start is slower: it reads the store's parts.
        this.#logger?.warn("memory_index_image_failed", {
          namespace,
          error: messageOf(error),
        });
      }
    });
  }

  /**
   * Indexes the entries under `prefix` (["e"] or ["e", ns]), per namespace,
   * each with its vector from the journal, its JSON record, or `salvaged`.
   */
  async #rebuildAll(
    prefix: StoreKey,
    journalOf: (namespace: string) => Map<string, Journaled> | undefined,
    salvaged: SearchIndex | null = null,
  ): Promise<Map<string, SearchIndex>> {
    const indexes = new Map<string, SearchIndex>();
    for await (const record of listAll(this.#store, prefix)) {
      const [, namespace, key] = record.key;
      if (typeof namespace !== "string" || typeof key !== "string") continue;
      let index = indexes.get(namespace);
      if (!index) indexes.set(namespace, index = new SearchIndex());
      const entry = this.#decode(namespace, key, valueOf(record));
      if (!entry) continue;
      const written = journalOf(namespace)?.get(key);
      const found = written
        ? withVector(entry, written)
        : entry.embedding || entry.sensitive
        ? entry
        : { ...entry, embedding: salvaged?.embedding(key) ?? null };
      indexEntry(index, found);
    }
    return indexes;
  }

  async #rebuild(
    namespace: string,
    journal: Map<string, Journaled>,
    salvaged: SearchIndex | null,
  ): Promise<SearchIndex> {
    const built = await this.#rebuildAll(
      ["e", namespace],
      () => journal,
      salvaged,
    );
    return built.get(namespace) ?? new SearchIndex();
  }

  #decode(
    namespace: string,
    key: string,
    value: StoreValue,
  ): StoredEntry | null {
    // One bad record must not keep the server down; get() still reports it.
    return tryDecode(
      namespace,
      key,
      value,
      (error) =>
        this.#logger?.warn("memory_entry_unreadable", {
          namespace,
          entry: key,
          error,
        }),
    );
  }

  #consider(namespace: string): void {
    const state = this.#indexes.get(namespace);
    if (state && !this.#closed && state.pending.size >= threshold(state)) {
      this.#schedule(namespace);
    }
  }

  #schedule(namespace: string): void {
    if (this.#foreign.has(namespace)) return;
    this.#queue.add(namespace);
    // Started after the current commit's callbacks, in the background.
    this.#saving ??= Promise.resolve().then(async () => {
      try {
        for (const next of this.#queue) {
          this.#queue.delete(next);
          if (!this.#closed) await this.#trySave(next);
        }
      } finally {
        this.#saving = null;
      }
    });
  }

  async #trySave(namespace: string): Promise<void> {
    try {
      await this.save(namespace);
    } catch (error) {
      // The journal still holds every change: only the next start is slower.
      this.#logger?.warn("memory_index_save_failed", {
        namespace,
        error: messageOf(error),
      });
    }
  }
}

function threshold(state: Namespace): number {
  return Math.max(SAVE_MIN, Math.ceil(state.index.size * SAVE_RATIO));
}
