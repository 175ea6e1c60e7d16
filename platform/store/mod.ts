/**
 * Store port: a small ordered key-value store with JSON or binary values, versions,
 * optimistic checks and paged listing. Implementations: MemoryStore (tests)
 * and KvStore (Deno KV). Validation and limits live here so that every
 * implementation rejects exactly the same inputs.
 */

export type KeyPart = string | number;
export type StoreKey = readonly KeyPart[];
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
/** A stored value: JSON, or bytes kept as they are (no base64 text). */
export type StoreValue = JsonValue | Uint8Array;

export interface StoreEntry {
  key: StoreKey;
  /** The JSON value; null for a binary value (see `bytes`). */
  value: JsonValue;
  /** A binary value (one set as a Uint8Array): its bytes, fresh for each read. */
  bytes?: Uint8Array;
  version: string;
}

export interface ListOptions {
  /** Page size, 1..MAX_LIST_LIMIT; defaults to DEFAULT_LIST_LIMIT. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
  reverse?: boolean;
}

export interface ListPage {
  entries: StoreEntry[];
  /** Pass back as `cursor` to get the next page; null when there is no more. */
  cursor: string | null;
}

/** `version: null` means the key must not exist. */
export interface Check {
  key: StoreKey;
  version: string | null;
}

export type Mutation =
  | {
    type: "set";
    key: StoreKey;
    value: StoreValue;
    /**
     * A store need not read or check what the write replaces: the key was
     * never written (a new record of an append-only log), or it only ever
     * holds small values (under 60 KiB) and every write of it checks another
     * key that guards it (a journal row written with its entry). On a key
     * that holds a large value, that value's storage may be left behind.
     */
    newKey?: boolean;
  }
  | { type: "delete"; key: StoreKey };

/** On success, `version` is the new version of every key the commit set. */
export type CommitResult =
  | {
    ok: true;
    version: string;
    /**
     * The change mark of the store right after this commit, when the store
     * can tell that no other commit came between (see unchangedBetween).
     */
    mark?: string;
  }
  | { ok: false };

export interface Store {
  readonly kind: string;
  /** Rejects when a store behind a server does not answer now; absent for local stores. */
  ping?(timeoutMs?: number): Promise<void>;
  get(key: StoreKey): Promise<StoreEntry | null>;
  getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]>;
  /** Returns the new version. */
  set(key: StoreKey, value: StoreValue): Promise<string>;
  delete(key: StoreKey): Promise<void>;
  /** Entries strictly under `prefix`, in key order. */
  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage>;
  /** All-or-nothing; `ok: false` when a check fails. Later mutations of the same key win. */
  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult>;
  /**
   * A cheap token of the store's state, when it has one: a later call returns
   * the same token only if no commit (by any process) finished in between.
   * Lets a reader skip a get that would answer what it already knows.
   */
  changeMark?(): string | undefined;
  /**
   * Whether `key` is surely as it was at mark `from`, now at mark `to`
   * (both from changeMark): when every commit in between is this store's
   * own and none wrote the key. False whenever in doubt.
   */
  unchangedBetween?(from: string, to: string, key: StoreKey): boolean;
  /**
   * Lets writes that may wait (an audit trail's records) join the next
   * commit made on this store, through any view, instead of a commit of
   * their own; returns the function that removes `rider`. Absent when the
   * store cannot (its commits then stay as they are).
   */
  addCommitRider?(rider: CommitRider): () => void;
  /** Resolves when every operation started so far has settled (writes are then durable). */
  flush(): Promise<void>;
  /** Flushes, then releases resources; later calls reject with "Store is closed". Idempotent. */
  close(): Promise<void>;
}

/**
 * Writes that need no commit of their own: a store asks each rider, before
 * a commit starts, for up to `room` sets of new keys (`newKey`, no checks)
 * to add to it, and tells it whether they were committed with it (a failed
 * check or an error: not committed, so the rider keeps them for another).
 */
export interface CommitRider {
  board(room: number): CommitRide | undefined;
}

export interface CommitRide {
  mutations: Mutation[];
  landed(ok: boolean): void;
}

/** Keys per commit left to riders: a commit near the limits takes none. */
const RIDER_KEYS = 50;
/** Serialized bytes a commit may hold for riders to board it, and riders' bytes at most. */
const RIDER_COMMIT_BYTES = 256 * 1024;
const RIDER_BYTES = 64 * 1024;

/** The riders of one store, boarding its commits (see CommitRider). */
export class CommitRiders {
  #riders = new Set<CommitRider>();

  add(rider: CommitRider): () => void {
    this.#riders.add(rider);
    return () => this.#riders.delete(rider);
  }

  /**
   * Adds the riders' mutations to `prepared` (prepared and validated as the
   * commit's own, after them) and returns what to tell them once the commit
   * is over; prepared unchanged and a no-op when none boards.
   */
  board(prepared: PreparedCommit): (ok: boolean) => void {
    if (this.#riders.size === 0) return noRide;
    const ids = new Set<string>();
    let bytes = 0;
    let keyBytes = 0;
    for (const c of prepared.checks) ids.add(c.id);
    for (const m of prepared.mutations) {
      ids.add(m.id);
      keyBytes += m.id.length;
      if (m.type === "set") bytes += m.bytes.length;
    }
    let room = Math.min(RIDER_KEYS, MAX_COMMIT_KEYS - ids.size);
    if (room <= 0 || bytes > RIDER_COMMIT_BYTES) return noRide;
    const rides: CommitRide[] = [];
    let riderBytes = 0;
    for (const rider of [...this.#riders]) {
      if (room <= 0) break;
      const ride = rider.board(room);
      if (ride === undefined) continue;
      rides.push(ride);
      let added: PreparedMutation[];
      try {
        added = prepareCommit({ mutations: ride.mutations }).mutations;
      } catch {
        added = [];
      }
      for (const m of added) {
        riderBytes += m.type === "set" ? m.bytes.length : 0;
      }
      const fits = added.length === ride.mutations.length &&
        added.length <= room && riderBytes <= RIDER_BYTES &&
        added.every((m) =>
          m.type === "set" && m.newKey && !ids.has(m.id) &&
          (keyBytes += m.id.length) <= MAX_COMMIT_KEY_BYTES
        );
      if (!fits) {
        // Given back at once: this commit will not hold them.
        rides.pop();
        ride.landed(false);
        break;
      }
      for (const m of added) ids.add(m.id);
      prepared.mutations.push(...added);
      room -= added.length;
    }
    if (rides.length === 0) return noRide;
    return (ok) => {
      for (const ride of rides) ride.landed(ok);
    };
  }
}

const noRide = (_ok: boolean) => {};

/** The shared engine cannot be reached: nothing was written; retry later (HTTP 503). */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreUnavailable";
  }
}

export const MIB = 1024 * 1024;
export const MAX_VALUE_BYTES = 32 * MIB;
/** Encoded key size; Deno KV allows 2048 and the KV store adds a small prefix. */
export const MAX_KEY_BYTES = 2000;
/** Distinct keys per commit: Deno KV allows 100 checks and KvStore checks every touched key. */
export const MAX_COMMIT_KEYS = 100;
/** Sum of encoded mutated key sizes per commit (Deno KV caps keys at 80 KiB per atomic write). */
export const MAX_COMMIT_KEY_BYTES = 64 * 1024;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export class StoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreError";
  }
}

const encoder = new TextEncoder();

/**
 * Deno KV's key encoding (FoundationDB tuple style). Both stores order keys
 * by these bytes, so strings sort before numbers and a key before its children.
 */
export function encodeKey(key: StoreKey): Uint8Array {
  const out: number[] = [];
  const view = new DataView(new ArrayBuffer(8));
  for (const part of key) {
    if (typeof part === "string") {
      out.push(0x02);
      for (const byte of encoder.encode(part)) {
        out.push(byte);
        if (byte === 0x00) out.push(0xff);
      }
      out.push(0x00);
    } else {
      view.setFloat64(0, part);
      const negative = (view.getUint8(0) & 0x80) !== 0;
      out.push(0x21);
      for (let i = 0; i < 8; i++) {
        const byte = view.getUint8(i);
        out.push(negative ? byte ^ 0xff : i === 0 ? byte ^ 0x80 : byte);
      }
    }
  }
  return Uint8Array.from(out);
}

/** One char per byte, so string comparison equals byte-wise key order. */
export function bytesToBinary(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return text;
}

/** True when `binary` is a well-formed sequence of encoded key parts. */
export function isEncodedKey(binary: string): boolean {
  let i = 0;
  while (i < binary.length) {
    const tag = binary.charCodeAt(i++);
    if (tag === 0x21) {
      i += 8;
      if (i > binary.length) return false;
    } else if (tag === 0x02) {
      for (;;) {
        if (i >= binary.length) return false;
        if (binary.charCodeAt(i++) !== 0x00) continue;
        if (binary.charCodeAt(i) !== 0xff) break;
        i++;
      }
    } else {
      return false;
    }
  }
  return true;
}

/** Same format as Deno KV cursors: padded base64url of the key bytes after the prefix. */
export function encodeCursor(binary: string): string {
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_");
}

export function decodeCursor(cursor: string): string {
  let binary: string;
  try {
    binary = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    throw new StoreError("Invalid cursor");
  }
  if (binary.length === 0 || !isEncodedKey(binary)) {
    throw new StoreError("Invalid cursor");
  }
  return binary;
}

export function formatKey(key: StoreKey): string {
  const text = JSON.stringify(key);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

function formatSize(bytes: number, limit: number): string {
  const mib = (bytes / MIB).toFixed(1);
  return Number(mib) > limit / MIB ? `${mib} MiB` : `${bytes} bytes`;
}

/**
 * Validates a key and returns its encoding as a binary string (see
 * bytesToBinary). Prefixes may be empty; keys of entries may not.
 */
export function validateKey(key: StoreKey, allowEmpty = false): string {
  if (!Array.isArray(key)) throw new StoreError("Key must be an array");
  if (key.length === 0 && !allowEmpty) {
    throw new StoreError("Key must not be empty");
  }
  for (const part of key) {
    const ok = typeof part === "string"
      ? part.isWellFormed()
      : typeof part === "number" && Number.isFinite(part);
    if (!ok) {
      throw new StoreError(
        `Invalid key part ${String(part)} in key ${formatKey(key)}: ` +
          "parts must be well-formed strings or finite numbers",
      );
    }
  }
  const binary = keyBinary(key);
  if (binary.length > MAX_KEY_BYTES) {
    throw new StoreError(
      `Key too long: ${binary.length} bytes exceeds the ${MAX_KEY_BYTES}-byte limit for key ${
        formatKey(key)
      }`,
    );
  }
  return binary;
}

/** bytesToBinary(encodeKey(key)), built directly: every store call validates its keys. */
function keyBinary(key: StoreKey): string {
  let binary = "";
  for (const part of key) {
    // ASCII without NUL (most keys) encodes as itself between 0x02 and 0x00.
    if (typeof part !== "string" || !plainAscii(part)) {
      return bytesToBinary(encodeKey(key));
    }
    binary += "\x02" + part + "\x00";
  }
  return binary;
}

function plainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0 || code > 0x7f) return false;
  }
  return true;
}

/** First byte of a binary value's serialized form; no JSON text starts with it. */
const BINARY_TAG = 0x00;

/**
 * Serializes a value to UTF-8 JSON, or bytes to BINARY_TAG + the bytes,
 * enforcing MAX_VALUE_BYTES.
 */
export function serializeValue(key: StoreKey, value: StoreValue): Uint8Array {
  if (value instanceof Uint8Array) {
    if (value.length + 1 > MAX_VALUE_BYTES) {
      throw valueTooLarge(key, value.length + 1);
    }
    const bytes = new Uint8Array(value.length + 1);
    bytes[0] = BINARY_TAG;
    bytes.set(value, 1);
    return bytes;
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new StoreError(`Value for key ${formatKey(key)} is not JSON`, {
      cause: error,
    });
  }
  if (json === undefined) {
    throw new StoreError(`Value for key ${formatKey(key)} is not JSON`);
  }
  const bytes = encoder.encode(json);
  if (bytes.length > MAX_VALUE_BYTES) throw valueTooLarge(key, bytes.length);
  return bytes;
}

function valueTooLarge(key: StoreKey, bytes: number): StoreError {
  return new StoreError(
    `Value too large: ${formatSize(bytes, MAX_VALUE_BYTES)} exceeds the ${
      MAX_VALUE_BYTES / MIB
    } MiB limit for key ${formatKey(key)}`,
  );
}

const decoder = new TextDecoder();

/**
 * A binary value comes back as a copy (a plain Uint8Array: a driver's Buffer
 * slices as a view), or as a view of `bytes` when they are `fresh` (read for
 * this call alone, as Deno KV's are): no copy of a large value.
 */
export function parseValue(bytes: Uint8Array, fresh = false): StoreValue {
  if (bytes[0] === BINARY_TAG) {
    return fresh && bytes.constructor === Uint8Array
      ? bytes.subarray(1)
      : new Uint8Array(bytes.subarray(1));
  }
  return JSON.parse(decoder.decode(bytes));
}

/** The entry a store returns for a value serialized by serializeValue. */
export function entryOf(
  key: StoreKey,
  bytes: Uint8Array,
  version: string,
  fresh = false,
): StoreEntry {
  const value = parseValue(bytes, fresh);
  return value instanceof Uint8Array
    ? { key, value: null, bytes: value, version }
    : { key, value, version };
}

export interface PreparedCheck {
  key: StoreKey;
  id: string;
  version: string | null;
}

export type PreparedMutation =
  | {
    type: "set";
    key: StoreKey;
    id: string;
    bytes: Uint8Array;
    newKey: boolean;
  }
  | { type: "delete"; key: StoreKey; id: string };

export interface PreparedCommit {
  checks: PreparedCheck[];
  /** One per key (the last one given wins), in order of first appearance. */
  mutations: PreparedMutation[];
}

/** Validates a commit against the shared limits and serializes its values. */
export function prepareCommit(
  op: { checks?: Check[]; mutations: Mutation[] },
): PreparedCommit {
  const checks = (op.checks ?? []).map((check) => ({
    key: check.key,
    id: validateKey(check.key),
    version: check.version,
  }));
  const byId = new Map<string, Mutation>();
  for (const mutation of op.mutations) {
    byId.set(validateKey(mutation.key), mutation);
  }
  const keys = new Set([...checks.map((c) => c.id), ...byId.keys()]);
  if (keys.size > MAX_COMMIT_KEYS) {
    throw new StoreError(
      `Too many keys in one commit: ${keys.size} exceeds the limit of ${MAX_COMMIT_KEYS}`,
    );
  }
  let keyBytes = 0;
  for (const id of byId.keys()) keyBytes += id.length;
  if (keyBytes > MAX_COMMIT_KEY_BYTES) {
    throw new StoreError(
      `Commit keys too large: ${keyBytes} bytes exceeds the ${MAX_COMMIT_KEY_BYTES}-byte limit`,
    );
  }
  const mutations: PreparedMutation[] = [];
  for (const [id, m] of byId) {
    mutations.push(
      m.type === "set"
        ? {
          type: "set",
          key: m.key,
          id,
          bytes: serializeValue(m.key, m.value),
          newKey: m.newKey === true,
        }
        : { type: "delete", key: m.key, id },
    );
  }
  return { checks, mutations };
}

export function listLimit(options: ListOptions | undefined): number {
  const limit = options?.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new StoreError(
      `List limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${limit}`,
    );
  }
  return limit;
}

/** A list call over encoded keys (see bytesToBinary), as a store that pages by key reads it. */
export interface ListRange {
  prefixId: string;
  limit: number;
  /** The encoded key the page continues after (from the cursor); null for the first page. */
  after: string | null;
  reverse: boolean;
}

export function listRange(
  prefix: StoreKey,
  options: ListOptions | undefined,
): ListRange {
  const prefixId = validateKey(prefix, true);
  const limit = listLimit(options);
  return {
    prefixId,
    limit,
    after: options?.cursor === undefined
      ? null
      : prefixId + decodeCursor(options.cursor),
    reverse: options?.reverse ?? false,
  };
}

/**
 * The page of up to `limit + 1` rows read in key order: the first `limit`,
 * and the cursor after the last of them when there were more.
 */
export function pageOf<T>(
  range: ListRange,
  rows: readonly T[],
  idOf: (row: T) => string,
): { rows: T[]; cursor: string | null } {
  const page = rows.slice(0, range.limit);
  const last = page.at(-1);
  return {
    rows: page,
    cursor: rows.length > range.limit && last !== undefined
      ? encodeCursor(idOf(last).slice(range.prefixId.length))
      : null,
  };
}

/**
 * Tracks in-flight operations so flush() can wait for them, and rejects
 * operations once the store is closed.
 */
export class OperationTracker {
  #pending = new Set<Promise<void>>();
  #closing: Promise<void> | null = null;

  run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#closing) return Promise.reject(new StoreError("Store is closed"));
    let result: Promise<T>;
    try {
      result = operation();
    } catch (error) {
      result = Promise.reject(error);
    }
    const settled = result.then(() => {}, () => {});
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
    return result;
  }

  flush(): Promise<void> {
    if (this.#closing) return Promise.reject(new StoreError("Store is closed"));
    return this.#settle();
  }

  close(release: () => void | Promise<void>): Promise<void> {
    this.#closing ??= this.#settle().then(release);
    return this.#closing;
  }

  async #settle(): Promise<void> {
    await Promise.all(this.#pending);
  }
}

/** A view of `store` that prepends `prefix` to every key and strips it from results. */
export function scoped(store: Store, prefix: StoreKey): Store {
  validateKey(prefix, true);
  return new ScopedStore(store, [...prefix]);
}

class ScopedStore implements Store {
  readonly kind: string;
  #store: Store;
  #prefix: KeyPart[];
  #operations = new OperationTracker();

  constructor(store: Store, prefix: KeyPart[]) {
    this.kind = store.kind;
    this.#store = store;
    this.#prefix = prefix;
  }

  get(key: StoreKey): Promise<StoreEntry | null> {
    return this.#operations.run(async () => {
      const entry = await this.#store.get(this.#wrap(key));
      return entry && this.#strip(entry);
    });
  }

  getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]> {
    return this.#operations.run(async () => {
      const entries = await this.#store.getMany(keys.map((k) => this.#wrap(k)));
      return entries.map((entry) => entry && this.#strip(entry));
    });
  }

  set(key: StoreKey, value: StoreValue): Promise<string> {
    return this.#operations.run(() => this.#store.set(this.#wrap(key), value));
  }

  delete(key: StoreKey): Promise<void> {
    return this.#operations.run(() => this.#store.delete(this.#wrap(key)));
  }

  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
    return this.#operations.run(async () => {
      validateKey(prefix, true);
      const page = await this.#store.list(
        [...this.#prefix, ...prefix],
        options,
      );
      return { ...page, entries: page.entries.map((e) => this.#strip(e)) };
    });
  }

  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    return this.#operations.run(() =>
      this.#store.commit({
        checks: op.checks?.map((c) => ({ ...c, key: this.#wrap(c.key) })),
        mutations: op.mutations.map((m) => ({ ...m, key: this.#wrap(m.key) })),
      })
    );
  }

  changeMark(): string | undefined {
    return this.#store.changeMark?.();
  }

  unchangedBetween(from: string, to: string, key: StoreKey): boolean {
    return this.#store.unchangedBetween?.(from, to, this.#wrap(key)) ?? false;
  }

  addCommitRider(rider: CommitRider): () => void {
    const prefix = this.#prefix;
    return this.#store.addCommitRider?.({
      board: (room) => {
        const ride = rider.board(room);
        return ride && {
          mutations: ride.mutations.map((m) => ({
            ...m,
            key: [...prefix, ...m.key],
          })),
          landed: (ok) => ride.landed(ok),
        };
      },
    }) ?? (() => {});
  }

  flush(): Promise<void> {
    return this.#operations.flush().then(() => this.#store.flush());
  }

  /** Closes only this view: the underlying store stays open for its owner. */
  close(): Promise<void> {
    return this.#operations.close(() => {});
  }

  #wrap(key: StoreKey): StoreKey {
    validateKey(key);
    return [...this.#prefix, ...key];
  }

  #strip(entry: StoreEntry): StoreEntry {
    return { ...entry, key: entry.key.slice(this.#prefix.length) };
  }
}
