// The storage port of the memory server. Implementations: KvBackend (a
// Deno KV file, or remote KV over KV Connect), PgBackend (PostgreSQL), and
// HostedBackend (a hosted backend with a local KvBackend as cache and a
// durable write queue).

import type {
  BackendHealth,
  EntryPage,
  Message,
  Rankings,
  SearchQuery,
  StorageStatus,
  StoredEntry,
} from "../model.ts";

/**
 * Thrown by a backend that cannot reach its server (connection refused,
 * timeout, server shutting down, login rejected). HostedBackend queues
 * writes on it; any other error means the operation itself was refused.
 */
export class BackendUnavailable extends Error {
  override name = "BackendUnavailable";
}

const NETWORK_ERRORS = [
  Deno.errors.ConnectionRefused,
  Deno.errors.ConnectionReset,
  Deno.errors.ConnectionAborted,
  Deno.errors.NotConnected,
  Deno.errors.BrokenPipe,
  Deno.errors.TimedOut,
  Deno.errors.NetworkUnreachable,
  Deno.errors.AddrNotAvailable,
];

/** Connectivity failure (queue and retry) as opposed to a refused operation. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof Error && error.name === "BackendUnavailable") {
    return true;
  }
  return NETWORK_ERRORS.some((type) => error instanceof type);
}

/** `update` of a missing key; the service turns it into a clear tool error. */
export class EntryNotFound extends Error {
  override name = "EntryNotFound";
  constructor(readonly namespace: string, readonly key: string) {
    super(`No entry "${key}" in namespace "${namespace}"`);
  }
}

/** A write expected the stored entry to have other tags (another process changed them): prepare it again. */
export class TagsChanged extends Error {
  override name = "TagsChanged";
  constructor(readonly namespace: string, readonly key: string) {
    super(`The tags of entry "${key}" in namespace "${namespace}" changed`);
  }
}

export interface ListQuery {
  /** Only entries carrying every one of these tags. */
  tags?: string[];
  /** 1..1000 */
  limit: number;
  cursor?: string | null;
}

export interface MemoryBackend {
  /** `local`, `postgres`, `kv-connect`, `hosted(postgres)`. */
  readonly kind: string;
  get(namespace: string, key: string): Promise<StoredEntry | null>;
  /**
   * Optional: several entries of one namespace in one read (null: absent),
   * in the order asked, to show them (a search's hits): their `embedding`
   * may be left out. Use getEntries().
   */
  getMany?(
    namespace: string,
    keys: readonly string[],
  ): Promise<(StoredEntry | null)[]>;
  /**
   * Writes an entry. `upsert` creates or replaces; `update` replaces and
   * throws EntryNotFound when the key is missing (checked atomically).
   * Returns the entry it replaced, if any.
   */
  put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null>;
  /**
   * Optional: an `upsert` that keeps the created_at of the entry it replaces,
   * decided within the write (saves the caller a read). Use upsertKeepingCreated().
   * With `expectTags` (null: no entry) it throws TagsChanged, writing
   * nothing, unless the stored entry has exactly those tags (checked atomically).
   */
  upsertKeepingCreated?(
    entry: StoredEntry,
    expectTags?: readonly string[] | null,
  ): Promise<StoredEntry | null>;
  /**
   * Optional: the tags of an entry as this process last wrote or loaded it,
   * without a read (null: no such entry; undefined: not known). A write that
   * keeps them passes them to upsertKeepingCreated as `expectTags`.
   */
  knownTags?(
    namespace: string,
    key: string,
  ): readonly string[] | null | undefined;
  /** Returns whether an entry was deleted. */
  delete(namespace: string, key: string): Promise<boolean>;
  /** Entries in key order, filtered by tags (all must match), paged. */
  list(namespace: string, query: ListQuery): Promise<EntryPage>;
  /** Entry counts of every namespace that has entries. */
  countByNamespace(): Promise<Record<string, number>>;
  /** Lexical (BM25 or full-text) and vector rankings within one namespace. */
  search(namespace: string, query: SearchQuery): Promise<Rankings>;
  /** Non-sensitive entries whose embedding is missing or made by another embedder. */
  staleEmbeddings(embedder: string, limit: number): Promise<StoredEntry[]>;
  /** Stores an embedding for an entry, unless the entry changed since `updatedAt`. */
  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void>;
  /** Appends to a conversation; returns how many messages it now has. */
  appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number>;
  /** The latest `limit` messages, oldest first. */
  history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]>;
  /** Session ids with stored messages in a namespace. */
  sessions(namespace: string): Promise<string[]>;
  health(): Promise<BackendHealth>;
  /** Synchronous state for /metrics; backends without a cache or queue leave it out. */
  status?(): StorageStatus;
  close(): Promise<void>;
}

/** An upsert keeping the replaced entry's created_at: in one write where the backend can, else a read and a write. */
export async function upsertKeepingCreated(
  backend: MemoryBackend,
  entry: StoredEntry,
): Promise<StoredEntry | null> {
  if (backend.upsertKeepingCreated) {
    return await backend.upsertKeepingCreated(entry);
  }
  const existing = await backend.get(entry.namespace, entry.key);
  const created = existing?.created_at ?? entry.created_at;
  return await backend.put({ ...entry, created_at: created }, "upsert");
}

/** Several entries of one namespace, to show them (maybe without `embedding`): in one read where the backend can, else one get each. */
export function getEntries(
  backend: MemoryBackend,
  namespace: string,
  keys: readonly string[],
): Promise<(StoredEntry | null)[]> {
  if (backend.getMany) return backend.getMany(namespace, keys);
  return Promise.all(keys.map((key) => backend.get(namespace, key)));
}
