/**
 * Store on Deno KV.
 *
 * Layout:
 *   ["d", ...key]         header: Uint8Array of JSON (inline) or a ChunkHeader
 *   ["c", writeId, i]     chunk i (≤ 60 KiB) of the value whose header names writeId
 *
 * Deno KV caps values at 64 KiB and atomic writes at 800 KiB, so large values
 * are written as chunks under a fresh writeId first (unreferenced, so invisible
 * to readers), then one atomic write swaps the headers. Every touched key is
 * checked at the version read just before, so the superseded chunks are known
 * exactly and deleted afterwards; a lost race retries, a failed caller check
 * deletes the fresh chunks instead.
 */
import { dirname } from "node:path";
import {
  type Check,
  type CommitResult,
  type CommitRider,
  CommitRiders,
  entryOf,
  formatKey,
  listLimit,
  type ListOptions,
  type ListPage,
  type Mutation,
  OperationTracker,
  prepareCommit,
  type PreparedCheck,
  type PreparedCommit,
  type PreparedMutation,
  type Store,
  type StoreEntry,
  StoreError,
  type StoreKey,
  type StoreValue,
  validateKey,
} from "./mod.ts";
import { messageOf } from "../errors.ts";
import { KvChangeMark, OwnCommits } from "./kv_change_mark.ts";

export const DATA_PREFIX = "d";
export const CHUNK_PREFIX = "c";
export const CHUNK_BYTES = 60 * 1024;

export interface ChunkHeader {
  id: string;
  chunks: number;
  bytes: number;
}

/** 12 × 60 KiB stays under Deno KV's 800 KiB atomic write limit. */
const CHUNKS_PER_WRITE = 12;
const MAX_ATOMIC_BYTES = 800 * 1024;
/** Room in a header write for keys, chunk headers and encoding overhead. */
const ATOMIC_RESERVE = 16 * 1024;
const HEADER_RESERVE = 256;
const MAX_GET_MANY = 10;
const MAX_DELETES = 1000;
const MAX_ATTEMPTS = 100;
/** Bound of KvStore's memory of inline versions (cleared past it). */
const MAX_INLINE_VERSIONS = 50_000;

export function isChunkHeader(value: unknown): value is ChunkHeader {
  return typeof value === "object" && value !== null && "id" in value &&
    typeof value.id === "string" && "chunks" in value &&
    Number.isInteger(value.chunks) && "bytes" in value &&
    Number.isInteger(value.bytes);
}

interface HeaderPlan {
  key: StoreKey;
  /** Uint8Array: inline value; ChunkHeader: chunked value; null: delete. */
  header: Uint8Array | ChunkHeader | null;
}

interface CurrentHeader {
  key: StoreKey;
  value: unknown;
  versionstamp: string | null;
}

export class KvStore implements Store {
  readonly kind = "kv";
  #kv: Deno.Kv;
  #operations = new OperationTracker();
  #riders = new CommitRiders();
  /** Key id -> a version getMany saw stored inline: a commit checking that version need not re-read it. */
  #inline = new Map<string, string>();

  /** Set for a KV file: whether anyone committed, read from SQLite's shared WAL-index. */
  #mark?: KvChangeMark;
  /** This store's commits the change counter pins to it (unchangedBetween). */
  #own = new OwnCommits();

  /** `path`: the KV file `kv` was opened from, if it is one. */
  constructor(kv: Deno.Kv, path?: string) {
    this.#kv = kv;
    if (path !== undefined && path !== ":memory:") {
      this.#mark = new KvChangeMark(path);
    }
  }

  /** Every public operation: tracked for flush/close, retried while another process holds the lock. */
  #run<T>(operation: () => Promise<T>): Promise<T> {
    return this.#operations.run(() => retryBusy(operation));
  }

  get(key: StoreKey): Promise<StoreEntry | null> {
    return this.#run(() => {
      validateKey(key);
      return this.#get(key);
    });
  }

  getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]> {
    return this.#run(async () => {
      const ids = keys.map((key) => validateKey(key));
      if (this.#inline.size > MAX_INLINE_VERSIONS) this.#inline.clear();
      const out: (StoreEntry | null)[] = [];
      const batches = [];
      for (let i = 0; i < keys.length; i += MAX_GET_MANY) {
        batches.push(keys.slice(i, i + MAX_GET_MANY));
      }
      // Issued together, as in #readHeaders; each batch is its own snapshot either way.
      const read = await Promise.all(
        batches.map((batch) => this.#kv.getMany(batch.map(dataKey))),
      );
      for (const [b, raws] of read.entries()) {
        for (const [j, raw] of raws.entries()) {
          const key = batches[b][j];
          if (raw.value instanceof Uint8Array && raw.versionstamp !== null) {
            this.#inline.set(ids[b * MAX_GET_MANY + j], raw.versionstamp);
          }
          out.push(
            raw.versionstamp === null
              ? null
              : (await this.#decode(key, raw.value, raw.versionstamp)) ??
                (await this.#get(key)),
          );
        }
      }
      return out;
    });
  }

  set(key: StoreKey, value: StoreValue): Promise<string> {
    return this.#run(async () => {
      const result = await this.#commit(
        prepareCommit({ mutations: [{ type: "set", key, value }] }),
      );
      if (!result.ok) throw new StoreError("Unconditional set failed");
      return result.version;
    });
  }

  delete(key: StoreKey): Promise<void> {
    return this.#run(async () => {
      await this.#commit(
        prepareCommit({ mutations: [{ type: "delete", key }] }),
      );
    });
  }

  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
    return this.#run(() => this.#list(prefix, options));
  }

  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    return this.#run(async () => {
      const prepared = prepareCommit(op);
      // Riders (audit records) join this commit: one disk sync for both.
      const landed = this.#riders.board(prepared);
      let ok = false;
      try {
        const result = await this.#commit(prepared);
        ok = result.ok;
        return result;
      } finally {
        landed(ok);
      }
    });
  }

  addCommitRider(rider: CommitRider): () => void {
    return this.#riders.add(rider);
  }

  flush(): Promise<void> {
    return this.#operations.flush();
  }

  changeMark(): string | undefined {
    return this.#mark?.read();
  }

  /**
   * True only when every commit between the two marks is one of this store's
   * own (see #own) and none of them wrote `key`: then the key is as it was at
   * `from`. Any commit of another connection or process, or one this store
   * could not pin, gives false.
   */
  unchangedBetween(from: string, to: string, key: StoreKey): boolean {
    return this.#own.unchangedBetween(from, to, validateKey(key));
  }

  close(): Promise<void> {
    return this.#operations.close(() => {
      this.#kv.close();
      // After the Kv: closing the -shm descriptor first would drop SQLite's locks.
      this.#mark?.close();
    });
  }

  async #get(key: StoreKey): Promise<StoreEntry | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const raw = await this.#kv.get(dataKey(key));
      if (raw.versionstamp === null) return null;
      const entry = await this.#decode(key, raw.value, raw.versionstamp);
      if (entry) return entry;
    }
    throw new StoreError(
      `Cannot read key ${formatKey(key)}: it keeps changing`,
    );
  }

  /** Returns null when the value was superseded while its chunks were read. */
  async #decode(
    key: StoreKey,
    value: unknown,
    version: string,
  ): Promise<StoreEntry | null> {
    let bytes: Uint8Array | null;
    if (value instanceof Uint8Array) bytes = value;
    else if (isChunkHeader(value)) bytes = await this.#readChunks(value);
    else throw new StoreError(`Corrupt record for key ${formatKey(key)}`);
    // Deno KV hands out a new array per read: the entry may keep a view of it.
    return bytes && entryOf(key, bytes, version, true);
  }

  async #readChunks(header: ChunkHeader): Promise<Uint8Array | null> {
    const bytes = new Uint8Array(header.bytes);
    let offset = 0;
    let index = 0;
    // Chunks are immutable and deleted all at once, so a gap means "superseded".
    for await (
      const chunk of this.#kv.list({ prefix: [CHUNK_PREFIX, header.id] })
    ) {
      const data = chunk.value;
      if (
        chunk.key[2] !== index || !(data instanceof Uint8Array) ||
        offset + data.length > bytes.length
      ) return null;
      bytes.set(data, offset);
      offset += data.length;
      index++;
    }
    return index === header.chunks && offset === header.bytes ? bytes : null;
  }

  async #list(
    prefix: StoreKey,
    options: ListOptions | undefined,
  ): Promise<ListPage> {
    validateKey(prefix, true);
    const limit = listLimit(options);
    const iterator = this.#kv.list({ prefix: dataKey(prefix) }, {
      limit: limit + 1, // one extra tells whether another page exists
      cursor: options?.cursor,
      reverse: options?.reverse ?? false,
      batchSize: Math.min(limit + 1, 500),
    });
    const entries: StoreEntry[] = [];
    let seen = 0;
    let cursor: string | null = null;
    let pageCursor = "";
    try {
      for await (const raw of iterator) {
        if (seen === limit) {
          cursor = pageCursor;
          break;
        }
        seen++;
        pageCursor = iterator.cursor;
        const key = toStoreKey(raw.key);
        // A superseded value is re-read; a deleted one is skipped.
        const entry = (await this.#decode(key, raw.value, raw.versionstamp)) ??
          (await this.#get(key));
        if (entry) entries.push(entry);
      }
    } catch (error) {
      if (error instanceof TypeError && /cursor/i.test(error.message)) {
        throw new StoreError("Invalid cursor", { cause: error });
      }
      throw error;
    }
    return { entries, cursor };
  }

  async #commit(prepared: PreparedCommit): Promise<CommitResult> {
    const plans: HeaderPlan[] = [];
    const fresh: ChunkHeader[] = [];
    let committed = false;
    try {
      let budget = MAX_ATOMIC_BYTES - ATOMIC_RESERVE;
      for (const m of prepared.mutations) {
        budget -= m.id.length + HEADER_RESERVE;
      }
      // Values written blind (newKey) claim the inline room first: the key's
      // next blind write reads no header, so chunks of a value stored there
      // would be left behind.
      const inline = new Set<PreparedMutation>();
      for (const blind of [true, false]) {
        for (const m of prepared.mutations) {
          if (m.type !== "set" || m.newKey !== blind) continue;
          if (m.bytes.length <= CHUNK_BYTES && m.bytes.length <= budget) {
            budget -= m.bytes.length;
            inline.add(m);
          }
        }
      }
      for (const m of prepared.mutations) {
        if (m.type === "delete") {
          plans.push({ key: m.key, header: null });
        } else if (inline.has(m)) {
          plans.push({ key: m.key, header: m.bytes });
        } else {
          const header = {
            id: crypto.randomUUID(),
            chunks: Math.ceil(m.bytes.length / CHUNK_BYTES),
            bytes: m.bytes.length,
          };
          fresh.push(header);
          await this.#writeChunks(header, m.bytes);
          plans.push({ key: m.key, header });
        }
      }
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const result = await this.#swapHeaders(prepared, plans);
        if (result === "retry") continue;
        committed = result.ok;
        return result;
      }
      throw new StoreError(
        `Commit gave up after ${MAX_ATTEMPTS} attempts: keys keep changing concurrently`,
      );
    } finally {
      // Best effort, like the cleanup after a successful swap: unreferenced
      // chunks are invisible, and a cleanup error must not mask the outcome.
      if (!committed) await this.#deleteChunks(fresh).catch(() => {});
    }
  }

  async #swapHeaders(
    prepared: PreparedCommit,
    plans: HeaderPlan[],
  ): Promise<CommitResult | "retry"> {
    const touched = new Map<string, StoreKey>();
    // A key checked absent, or at a version read inline, needs no read: its
    // atomic check below keeps it so, and it has no chunks to clean up.
    const known = new Map<string, PreparedCheck>();
    for (const c of prepared.checks) {
      const inline = c.version !== null && this.#inline.get(c.id) === c.version;
      if (c.version === null || inline) known.set(c.id, c);
      else touched.set(c.id, c.key);
    }
    for (const m of prepared.mutations) {
      // A new key replaces nothing: no header to read, no chunks to clean up.
      if (m.type === "set" && m.newKey) continue;
      if (!known.has(m.id)) touched.set(m.id, m.key);
    }
    const current = await this.#readHeaders(touched);
    for (const [id, c] of known) {
      current.set(id, { key: c.key, value: null, versionstamp: c.version });
    }
    for (const check of prepared.checks) {
      if (current.get(check.id)?.versionstamp !== check.version) {
        return { ok: false };
      }
    }
    const atomic = this.#kv.atomic();
    for (const { key, versionstamp } of current.values()) {
      atomic.check({ key: dataKey(key), versionstamp });
    }
    for (const { key, header } of plans) {
      if (header === null) atomic.delete(dataKey(key));
      else atomic.set(dataKey(key), header);
    }
    const before = this.#mark?.read();
    const result = await atomic.commit();
    const after = result.ok ? this.#mark?.read() : undefined;
    const pinned = this.#own.pin(
      before,
      after,
      prepared.mutations.map((m) => m.id),
    );
    if (!result.ok) {
      // A known key that changed fails the caller's check: not a race of ours to retry.
      const now = await this.#readHeaders(
        new Map([...known].map(([id, c]) => [id, c.key])),
      );
      const changed = [...known].some(([id, c]) =>
        now.get(id)?.versionstamp !== c.version
      );
      return changed ? { ok: false } : "retry";
    }
    const superseded: ChunkHeader[] = [];
    for (const [i, m] of prepared.mutations.entries()) {
      const old = current.get(m.id)?.value;
      if (isChunkHeader(old)) superseded.push(old);
      // A later commit checking the key at this version need not read it, as after a getMany.
      if (
        m.type === "set" && !m.newKey && plans[i].header instanceof Uint8Array
      ) this.#inline.set(m.id, result.versionstamp);
    }
    if (this.#inline.size > MAX_INLINE_VERSIONS) this.#inline.clear();
    // The new values are committed; leftover chunks would only cost space.
    await this.#deleteChunks(superseded).catch(() => {});
    return {
      ok: true,
      version: result.versionstamp,
      ...pinned && { mark: after },
    };
  }

  async #readHeaders(
    keys: Map<string, StoreKey>,
  ): Promise<Map<string, CurrentHeader>> {
    const entries = [...keys];
    const current = new Map<string, CurrentHeader>();
    // All at once: the KV thread works through them without waiting for this one between batches.
    const batches = [];
    for (let i = 0; i < entries.length; i += MAX_GET_MANY) {
      batches.push(entries.slice(i, i + MAX_GET_MANY));
    }
    const read = await Promise.all(
      batches.map((batch) =>
        this.#kv.getMany(batch.map(([, k]) => dataKey(k)))
      ),
    );
    for (const [b, raws] of read.entries()) {
      for (const [j, raw] of raws.entries()) {
        const [id, key] = batches[b][j];
        current.set(id, {
          key,
          value: raw.value,
          versionstamp: raw.versionstamp,
        });
      }
    }
    return current;
  }

  async #writeChunks(header: ChunkHeader, bytes: Uint8Array): Promise<void> {
    for (let first = 0; first < header.chunks; first += CHUNKS_PER_WRITE) {
      const atomic = this.#kv.atomic();
      const end = Math.min(header.chunks, first + CHUNKS_PER_WRITE);
      for (let i = first; i < end; i++) {
        atomic.set(
          [CHUNK_PREFIX, header.id, i],
          bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES),
        );
      }
      await atomic.commit();
    }
  }

  /** Deletes each group in one atomic write so readers see all of it or none. */
  async #deleteChunks(headers: ChunkHeader[]): Promise<void> {
    for (const header of headers) {
      for (let first = 0; first < header.chunks; first += MAX_DELETES) {
        const atomic = this.#kv.atomic();
        const end = Math.min(header.chunks, first + MAX_DELETES);
        for (let i = first; i < end; i++) {
          atomic.delete([CHUNK_PREFIX, header.id, i]);
        }
        await atomic.commit();
      }
    }
  }
}

/**
 * Opens (creating if needed) a KV file, making missing parent directories.
 * ":memory:" opens a throwaway in-memory database.
 */
export async function openKvStore(path: string): Promise<KvStore> {
  try {
    if (path === "") throw new Error("the path is empty");
    if (path !== ":memory:") await prepareLocation(path);
    return new KvStore(await Deno.openKv(path), path);
  } catch (error) {
    const reason = messageOf(error);
    throw new StoreError(`Cannot open store at ${path}: ${reason}`, {
      cause: error,
    });
  }
}

async function prepareLocation(path: string): Promise<void> {
  try {
    if ((await Deno.stat(path)).isDirectory) {
      throw new Error("the path is a directory");
    }
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.mkdir(dirname(path), { recursive: true });
}

function dataKey(key: StoreKey): Deno.KvKey {
  return [DATA_PREFIX, ...key];
}

function toStoreKey(raw: Deno.KvKey): StoreKey {
  const key: (string | number)[] = [];
  for (const part of raw.slice(1)) {
    if (typeof part !== "string" && typeof part !== "number") {
      throw new StoreError(`Corrupt key in store: ${String(part)}`);
    }
    key.push(part);
  }
  return key;
}

/** SQLite's answer when another process holds the file's lock (several daemons sharing one KV file). */
function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked/i.test(error.message);
}

const BUSY_ATTEMPTS = 8;

/**
 * Runs one store operation, again after a short random pause while another
 * process holds the lock. A locked transaction did not apply, so a retry
 * cannot apply it twice.
 */
async function retryBusy<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isBusy(error) || attempt >= BUSY_ATTEMPTS) throw error;
      const pause = Math.min(5 * 2 ** attempt, 500) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
