// MemoryBackend over the platform Store (a Deno KV file, or remote KV over KV
// Connect, which is just another KvStore). Search runs on in-memory indexes
// built at open and kept in sync by this process's writes, so writes by other
// processes sharing a remote KV are seen by search only after a restart.
//
// Layout (under the store given, which the daemon scopes to ["svc-memory"]):
//   ["e", ns, key]             entry record (see EntryRecord)
//   ["t", ns, tag, key]        null: tag index, for list-by-tag paging
//   ["n", ns]                  number of entries in ns (absent when 0)
//   ["s", ns, session]         { count }: messages in the session
//   ["m", ns, session, seq]    message; seq is zero-padded, so key order is time order

import { Buffer } from "node:buffer";
import { z } from "zod";
import type { Logger } from "../../platform/log.ts";
import {
  type Check,
  type JsonValue,
  MAX_LIST_LIMIT,
  type Mutation,
  type Store,
  type StoreEntry,
  type StoreKey,
} from "../../platform/store.ts";
import {
  EntryNotFound,
  type ListQuery,
  type MemoryBackend,
} from "./backend.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  Rankings,
  SearchQuery,
  StoredEntry,
} from "./model.ts";
import { indexText, SearchIndex } from "./search_index.ts";

/** A write touches the entry, the counter and the tag rows: Store commits hold 100 keys. */
export const MAX_TAGS_PER_ENTRY = 48;
/** Messages per commit when appending (plus the session record). */
const MESSAGES_PER_COMMIT = 90;
const MAX_ATTEMPTS = 20;
/** Returned by a write attempt whose commit lost a race: read again and retry. */
const RETRY = Symbol("retry");

const EntryRecord = z.object({
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  /** `f32`: base64 of the vector's little-endian Float32 bytes (a quarter of JSON numbers' size). */
  embedding: z.object({ embedder: z.string(), f32: z.string() }).nullable(),
});
const MessageRecord = z.object({
  role: z.string(),
  content: z.string(),
  at: z.string(),
  extra: z.record(z.string(), z.json()).optional(),
});
const SessionRecord = z.object({ count: z.number().int().nonnegative() });
const Cursor = z.object({ tag: z.string().optional(), store: z.string() });

/** What search and list-by-tag need to know about an entry without reading it. */
interface Meta {
  tags: string[];
  sensitive: boolean;
  embedder: string | null;
}

interface Namespace {
  index: SearchIndex;
  meta: Map<string, Meta>;
  tagCounts: Map<string, number>;
}

export interface KvBackendOptions {
  /** Reported as the backend kind: `local` (default) or `kv-connect`. */
  kind?: string;
  logger?: Logger;
}

export class KvBackend implements MemoryBackend {
  readonly kind: string;
  #store: Store;
  #namespaces = new Map<string, Namespace>();
  /** Per-namespace write queue, so index updates apply in commit order. */
  #queues = new Map<string, Promise<unknown>>();

  private constructor(store: Store, options: KvBackendOptions) {
    this.#store = store;
    this.kind = options.kind ?? "local";
  }

  /**
   * Opens the backend and indexes every entry (one SearchIndex per
   * namespace). The backend owns `store`: close() closes it (closing a
   * scoped view leaves the underlying store open).
   */
  static async open(
    store: Store,
    options: KvBackendOptions = {},
  ): Promise<KvBackend> {
    const backend = new KvBackend(store, options);
    const started = performance.now();
    let entries = 0;
    for await (const record of listAll(store, ["e"])) {
      const [, namespace, key] = record.key;
      if (typeof namespace !== "string" || typeof key !== "string") continue;
      try {
        backend.#track(decodeEntry(namespace, key, record.value));
        entries++;
      } catch (error) {
        // One bad record must not keep the server down; get() still reports it.
        options.logger?.warn("memory_entry_unreadable", {
          namespace,
          entry: key,
          error,
        });
      }
    }
    options.logger?.info("memory_index_loaded", {
      namespaces: backend.#namespaces.size,
      entries,
      ms: Math.round(performance.now() - started),
    });
    return backend;
  }

  async get(namespace: string, key: string): Promise<StoredEntry | null> {
    const record = await this.#store.get(["e", namespace, key]);
    return record && decodeEntry(namespace, key, record.value);
  }

  async put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    const tags = [...new Set(entry.tags)];
    if (tags.length > MAX_TAGS_PER_ENTRY) {
      throw new Error(
        `Entry "${entry.key}" has ${tags.length} tags; at most ${MAX_TAGS_PER_ENTRY} are allowed`,
      );
    }
    // A sensitive entry's value is ciphertext: an embedding of it must not exist.
    const stored = entry.sensitive ? { ...entry, embedding: null } : entry;
    const { namespace: ns, key } = entry;
    return await this.#write(ns, key, async () => {
      const [current, counter] = await this.#store.getMany([
        ["e", ns, key],
        ["n", ns],
      ]);
      // A corrupt record may still be overwritten (its tag rows are then left behind).
      const old = current && tryDecode(ns, key, current.value);
      if (!current && mode === "update") throw new EntryNotFound(ns, key);
      const checks: Check[] = [{
        key: ["e", ns, key],
        version: current?.version ?? null,
      }];
      const mutations: Mutation[] = [{
        type: "set",
        key: ["e", ns, key],
        value: encodeEntry(stored),
      }];
      if (!current) {
        checks.push({ key: ["n", ns], version: counter?.version ?? null });
        mutations.push({
          type: "set",
          key: ["n", ns],
          value: countOf(counter) + 1,
        });
      }
      const oldTags = new Set(old?.tags);
      for (const tag of oldTags) {
        if (!tags.includes(tag)) {
          mutations.push({ type: "delete", key: ["t", ns, tag, key] });
        }
      }
      for (const tag of tags) {
        if (!oldTags.has(tag)) {
          mutations.push({
            type: "set",
            key: ["t", ns, tag, key],
            value: null,
          });
        }
      }
      if (!(await this.#store.commit({ checks, mutations })).ok) return RETRY;
      this.#track(stored);
      return old;
    });
  }

  delete(namespace: string, key: string): Promise<boolean> {
    return this.#write(namespace, key, async () => {
      const [current, counter] = await this.#store.getMany([
        ["e", namespace, key],
        ["n", namespace],
      ]);
      if (!current) return false;
      const old = tryDecode(namespace, key, current.value);
      const count = countOf(counter) - 1;
      const mutations: Mutation[] = [
        { type: "delete", key: ["e", namespace, key] },
        count > 0
          ? { type: "set", key: ["n", namespace], value: count }
          : { type: "delete", key: ["n", namespace] },
        ...[...new Set(old?.tags)].map((tag): Mutation => ({
          type: "delete",
          key: ["t", namespace, tag, key],
        })),
      ];
      const result = await this.#store.commit({
        checks: [
          { key: ["e", namespace, key], version: current.version },
          { key: ["n", namespace], version: counter?.version ?? null },
        ],
        mutations,
      });
      if (!result.ok) return RETRY;
      this.#untrack(namespace, key);
      return true;
    });
  }

  async list(namespace: string, query: ListQuery): Promise<EntryPage> {
    if (
      !Number.isInteger(query.limit) || query.limit < 1 ||
      query.limit > MAX_LIST_LIMIT
    ) {
      throw new Error(
        `List limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${query.limit}`,
      );
    }
    const tags = [...new Set(query.tags ?? [])];
    const cursor = query.cursor ? decodeCursor(query.cursor, tags) : null;
    if (tags.length === 0) {
      const page = await this.#store.list(["e", namespace], {
        limit: query.limit,
        cursor: cursor?.store,
      });
      return {
        entries: page.entries.map((record) =>
          decodeEntry(namespace, String(record.key[2]), record.value)
        ),
        cursor: page.cursor && encodeCursor({ store: page.cursor }),
      };
    }
    return await this.#listByTags(namespace, tags, query.limit, cursor);
  }

  /**
   * Walks the rarest tag's index rows. The walked tag's rows are the truth;
   * the other tags are pre-checked in memory, and keys unknown here (written
   * by another daemon sharing the store) are read and checked too.
   */
  async #listByTags(
    namespace: string,
    tags: string[],
    limit: number,
    cursor: z.infer<typeof Cursor> | null,
  ): Promise<EntryPage> {
    const state = this.#namespaces.get(namespace);
    const count = (tag: string) => state?.tagCounts.get(tag) ?? 0;
    const walk = cursor?.tag ??
      tags.reduce((best, tag) => count(tag) < count(best) ? tag : best);
    const prefix: StoreKey = ["t", namespace, walk];
    const others = tags.filter((tag) => tag !== walk);
    const keys: string[] = [];
    let from = cursor?.store;
    let next: string | null = null;
    for (;;) {
      const page = await this.#store.list(prefix, {
        limit: Math.min(MAX_LIST_LIMIT, Math.max(limit, 100)),
        cursor: from,
      });
      const full = page.entries.findIndex((row) => {
        const key = row.key[3];
        if (typeof key !== "string") return false;
        const meta = state?.meta.get(key);
        if (!meta || others.every((tag) => meta.tags.includes(tag))) {
          keys.push(key);
        }
        return keys.length === limit;
      });
      if (full === -1 && page.cursor !== null) {
        from = page.cursor;
        continue;
      }
      // The page may hold rows past the last key kept: re-list to end right after it.
      next = full === -1 || full === page.entries.length - 1
        ? page.cursor
        : (await this.#store.list(prefix, { limit: full + 1, cursor: from }))
          .cursor;
      break;
    }
    const records = await this.#store.getMany(
      keys.map((key) => ["e", namespace, key]),
    );
    const entries: StoredEntry[] = [];
    for (const [i, record] of records.entries()) {
      const entry = record && tryDecode(namespace, keys[i], record.value);
      // Another process may have changed the entry since it was indexed.
      if (entry && tags.every((tag) => entry.tags.includes(tag))) {
        entries.push(entry);
      }
    }
    return {
      entries,
      cursor: next && encodeCursor({ tag: walk, store: next }),
    };
  }

  async countByNamespace(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for await (const record of listAll(this.#store, ["n"])) {
      const count = countOf(record);
      if (typeof record.key[1] === "string" && count > 0) {
        counts[record.key[1]] = count;
      }
    }
    return counts;
  }

  search(namespace: string, query: SearchQuery): Promise<Rankings> {
    const index = this.#namespaces.get(namespace)?.index;
    return Promise.resolve(
      index ? index.search(query) : { lexical: [], vector: [] },
    );
  }

  /** Entries in index order (not key order); an entry that never embeds keeps coming back. */
  async staleEmbeddings(
    embedder: string,
    limit: number,
  ): Promise<StoredEntry[]> {
    const keys: StoreKey[] = [];
    outer: for (const [namespace, state] of this.#namespaces) {
      for (const [key, meta] of state.meta) {
        if (keys.length >= limit) break outer;
        if (!meta.sensitive && meta.embedder !== embedder) {
          keys.push(["e", namespace, key]);
        }
      }
    }
    const entries: StoredEntry[] = [];
    for (const record of await this.#store.getMany(keys)) {
      if (!record) continue;
      const [, namespace, key] = record.key;
      const entry = decodeEntry(String(namespace), String(key), record.value);
      if (!entry.sensitive && entry.embedding?.embedder !== embedder) {
        entries.push(entry);
      }
    }
    return entries;
  }

  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void> {
    return this.#write(namespace, key, async () => {
      const current = await this.#store.get(["e", namespace, key]);
      if (!current) return;
      const entry = decodeEntry(namespace, key, current.value);
      // The entry changed since the caller read it: its text is not what was embedded.
      if (entry.updated_at !== updatedAt || entry.sensitive) return;
      const updated = { ...entry, embedding };
      const result = await this.#store.commit({
        checks: [{ key: ["e", namespace, key], version: current.version }],
        mutations: [{
          type: "set",
          key: ["e", namespace, key],
          value: encodeEntry(updated),
        }],
      });
      if (!result.ok) return RETRY;
      this.#track(updated);
    });
  }

  async appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    const sessionKey = ["s", namespace, sessionId];
    const records = messages.map(encodeMessage);
    let total = sessionCount(await this.#store.get(sessionKey));
    for (let i = 0; i < records.length; i += MESSAGES_PER_COMMIT) {
      const batch = records.slice(i, i + MESSAGES_PER_COMMIT);
      let done = false;
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !done; attempt++) {
        const session = await this.#store.get(sessionKey);
        const start = sessionCount(session);
        const result = await this.#store.commit({
          checks: [{ key: sessionKey, version: session?.version ?? null }],
          mutations: [
            {
              type: "set",
              key: sessionKey,
              value: { count: start + batch.length },
            },
            ...batch.map((value, j): Mutation => ({
              type: "set",
              key: ["m", namespace, sessionId, sequence(start + j)],
              value,
            })),
          ],
        });
        done = result.ok;
        total = start + batch.length;
      }
      if (!done) {
        throw new Error(
          `Could not append to session "${sessionId}" in namespace "${namespace}": ` +
            "it kept changing concurrently; try again",
        );
      }
    }
    return total;
  }

  async history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    const newestFirst: Message[] = [];
    let cursor: string | undefined;
    while (newestFirst.length < limit) {
      const page = await this.#store.list(["m", namespace, sessionId], {
        reverse: true,
        limit: Math.min(MAX_LIST_LIMIT, limit - newestFirst.length),
        cursor,
      });
      newestFirst.push(...page.entries.map((r) => decodeMessage(r.value)));
      if (page.cursor === null) break;
      cursor = page.cursor;
    }
    return newestFirst.reverse();
  }

  async sessions(namespace: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const record of listAll(this.#store, ["s", namespace])) {
      if (typeof record.key[2] === "string") ids.push(record.key[2]);
    }
    return ids;
  }

  health(): Promise<BackendHealth> {
    return Promise.resolve({ status: "ok" });
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#queues.values());
    await this.#store.close();
  }

  /** Runs `attempt` in the namespace's queue until it does not ask to RETRY (a check failed). */
  #write<T>(
    namespace: string,
    key: string,
    attempt: () => Promise<T | typeof RETRY>,
  ): Promise<T> {
    return this.#serial(namespace, async () => {
      for (let i = 0; i < MAX_ATTEMPTS; i++) {
        const result = await attempt();
        if (result !== RETRY) return result;
      }
      throw new Error(
        `Could not write entry "${key}" in namespace "${namespace}": ` +
          "it kept changing concurrently; try again",
      );
    });
  }

  #serial<T>(namespace: string, run: () => Promise<T>): Promise<T> {
    const result = (this.#queues.get(namespace) ?? Promise.resolve()).then(
      run,
    );
    const tail = result.catch(() => {});
    this.#queues.set(namespace, tail);
    void tail.then(() => {
      if (this.#queues.get(namespace) === tail) this.#queues.delete(namespace);
    });
    return result;
  }

  #track(entry: StoredEntry): void {
    let state = this.#namespaces.get(entry.namespace);
    if (!state) {
      state = {
        index: new SearchIndex(),
        meta: new Map(),
        tagCounts: new Map(),
      };
      this.#namespaces.set(entry.namespace, state);
    }
    this.#untrack(entry.namespace, entry.key);
    const tags = [...new Set(entry.tags)];
    for (const tag of tags) {
      state.tagCounts.set(tag, (state.tagCounts.get(tag) ?? 0) + 1);
    }
    state.meta.set(entry.key, {
      tags,
      sensitive: entry.sensitive,
      embedder: entry.embedding?.embedder ?? null,
    });
    state.index.upsert(entry.key, indexText(entry), entry.embedding);
  }

  #untrack(namespace: string, key: string): void {
    const state = this.#namespaces.get(namespace);
    const meta = state?.meta.get(key);
    if (!state || !meta) return;
    for (const tag of meta.tags) {
      const left = (state.tagCounts.get(tag) ?? 1) - 1;
      if (left > 0) state.tagCounts.set(tag, left);
      else state.tagCounts.delete(tag);
    }
    state.meta.delete(key);
    state.index.remove(key);
  }
}

/** Every record under `prefix`; the next page is read while this one is consumed. */
async function* listAll(
  store: Store,
  prefix: StoreKey,
): AsyncGenerator<StoreEntry> {
  const limit = MAX_LIST_LIMIT;
  let page = await store.list(prefix, { limit });
  for (;;) {
    const cursor = page.cursor;
    const next = cursor === null ? null : store.list(prefix, { limit, cursor });
    // Handled later by `await`; this only keeps an early exit from leaving it unobserved.
    next?.catch(() => {});
    yield* page.entries;
    if (!next) return;
    page = await next;
  }
}

function countOf(record: StoreEntry | null): number {
  const count = record?.value;
  return typeof count === "number" && Number.isInteger(count) && count > 0
    ? count
    : 0;
}

function sessionCount(record: StoreEntry | null): number {
  const parsed = SessionRecord.safeParse(record?.value);
  return parsed.success ? parsed.data.count : 0;
}

/** Zero-padded so that string order is numeric order. */
function sequence(n: number): string {
  return String(n).padStart(12, "0");
}

function encodeEntry(entry: StoredEntry): JsonValue {
  const vector = entry.embedding?.vector;
  return {
    value: entry.value,
    tags: entry.tags,
    sensitive: entry.sensitive,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
    // Deno runs on little-endian machines only, so the raw bytes are little-endian.
    embedding: entry.embedding && vector
      ? {
        embedder: entry.embedding.embedder,
        f32: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)
          .toString("base64"),
      }
      : null,
  };
}

function decodeEntry(
  namespace: string,
  key: string,
  value: JsonValue,
): StoredEntry {
  const parsed = EntryRecord.safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `Stored entry "${key}" in namespace "${namespace}" is unreadable ` +
        `(${parsed.error.issues[0]?.message}); delete it or restore a backup`,
    );
  }
  const { embedding, ...rest } = parsed.data;
  let decoded: StoredEntry["embedding"] = null;
  if (embedding) {
    const bytes = Buffer.from(embedding.f32, "base64");
    const vector = new Float32Array(Math.floor(bytes.length / 4));
    new Uint8Array(vector.buffer).set(bytes.subarray(0, vector.length * 4));
    decoded = { embedder: embedding.embedder, vector };
  }
  return { namespace, key, ...rest, embedding: decoded };
}

function tryDecode(
  namespace: string,
  key: string,
  value: JsonValue,
): StoredEntry | null {
  try {
    return decodeEntry(namespace, key, value);
  } catch {
    return null;
  }
}

function encodeMessage(message: Message): JsonValue {
  const record: { [key: string]: JsonValue } = {
    role: message.role,
    content: message.content,
    at: message.at,
  };
  if (message.extra !== undefined) {
    // JSON round trip: drops undefined and rejects what JSON cannot hold.
    record.extra = z.record(z.string(), z.json()).parse(
      JSON.parse(JSON.stringify(message.extra)),
    );
  }
  return record;
}

function decodeMessage(value: JsonValue): Message {
  const parsed = MessageRecord.safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `A stored conversation message is unreadable (${
        parsed.error.issues[0]?.message
      })`,
    );
  }
  return parsed.data;
}

function encodeCursor(cursor: z.infer<typeof Cursor>): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

function decodeCursor(text: string, tags: string[]): z.infer<typeof Cursor> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString());
  } catch {
    parsed = undefined;
  }
  const cursor = Cursor.safeParse(parsed);
  // A cursor walks one tag's rows, so it only fits a query with that tag.
  const fits = cursor.success &&
    (cursor.data.tag === undefined
      ? tags.length === 0
      : tags.includes(cursor.data.tag));
  if (!cursor.success || !fits) {
    throw new Error(
      "Invalid cursor: pass back the cursor of the previous page, with the same tags",
    );
  }
  return cursor.data;
}
