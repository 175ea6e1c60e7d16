// KvBackend's record layout in the Store and the codecs of its entry records,
// list cursors and counters, with the paging helper its parts share.
//
// Layout (under the store given, which the daemon scopes to ["svc-memory"]):
//   ["e", ns, key]             entry record (binary, entry_codec.ts; JSON before)
//   ["t", ns, tag, key]        null: tag index, for list-by-tag paging
//   ["n", ns]                  number of entries in ns (absent when 0)
//   ["s", ns, session]         { count }: messages in the session
//   ["m", ns, session, seq]    message; seq is zero-padded, so key order is time order

import { Buffer } from "node:buffer";
import { z } from "zod";
import {
  MAX_LIST_LIMIT,
  type Store,
  type StoreEntry,
  type StoreKey,
  type StoreValue,
} from "../../../platform/store/mod.ts";
import type { StoredEntry } from "../model.ts";
import { quantiseRow } from "../search_vectors.ts";
import { decodeRecord, encodeRecord } from "./entry_codec.ts";

/** Commit attempts before a write that keeps losing races gives up. */
export const MAX_ATTEMPTS = 20;

/** Records written before the binary form: JSON, with the vector in them. */
const JsonRecord = z.object({
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  /**
   * `i8` + `scale`: base64 of the vector quantised to int8 (component =
   * i8 × scale). `f32`: base64 of little-endian Float32 bytes (older still).
   */
  embedding: z.union([
    z.object({ embedder: z.string(), i8: z.string(), scale: z.number() }),
    z.object({ embedder: z.string(), f32: z.string() }),
  ]).nullable(),
});
const Cursor = z.object({ tag: z.string().optional(), store: z.string() });
export type ListCursor = z.infer<typeof Cursor>;

/** Every record under `prefix`; the next page is read while this one is consumed. */
export async function* listAll(
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

export function countOf(record: StoreEntry | null): number {
  return countValue(record?.value ?? null);
}

export function countValue(count: StoreValue | null): number {
  return typeof count === "number" && Number.isInteger(count) && count > 0
    ? count
    : 0;
}

/** A record's value as written: its bytes when binary, else its JSON. */
export function valueOf(record: StoreEntry): StoreValue {
  return record.bytes ?? record.value;
}

/**
 * The entry record: binary, without the vector (the index snapshot and the
 * journal keep it, kv_index.ts). See entry_codec.ts for the layout.
 */
export function encodeEntry(entry: StoredEntry): Uint8Array {
  return encodeRecord(entry);
}

/**
 * The record of an entry, and the entry as the index keeps it (vector
 * quantised to int8 × scale), without parsing the record back.
 */
export function encodeStored(
  entry: StoredEntry,
): { record: Uint8Array; stored: StoredEntry } {
  const row = entry.embedding && quantiseRow(entry.embedding.vector);
  return {
    record: encodeRecord(entry),
    stored: {
      ...entry,
      tags: [...entry.tags],
      embedding: entry.embedding && {
        embedder: entry.embedding.embedder,
        // Not indexable (zero): kept as "made by this embedder", without a vector.
        vector: row ? dequantise(row.i8, row.scale) : new Float32Array(0),
      },
    },
  };
}

/**
 * The entry a record holds. Binary records (this version's) carry no vector:
 * `embedding` is null and the caller takes it from the index or journal.
 * JSON records (earlier versions) carry theirs; they are read as they are and
 * rewritten in the binary form at their next write.
 */
export function decodeEntry(
  namespace: string,
  key: string,
  value: StoreValue,
): StoredEntry {
  if (value instanceof Uint8Array) {
    const fields = decodeRecord(value);
    if (!fields) throw unreadable(namespace, key, "damaged binary record");
    return { namespace, key, ...fields, embedding: null };
  }
  const parsed = JsonRecord.safeParse(value);
  if (!parsed.success) {
    throw unreadable(namespace, key, parsed.error.issues[0]?.message);
  }
  const { embedding, ...rest } = parsed.data;
  let decoded: StoredEntry["embedding"] = null;
  if (embedding && "i8" in embedding) {
    const bytes = Buffer.from(embedding.i8, "base64");
    decoded = {
      embedder: embedding.embedder,
      vector: dequantise(
        new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length),
        embedding.scale,
      ),
    };
  } else if (embedding) {
    // Deno runs on little-endian machines only, so the raw bytes are little-endian.
    const bytes = Buffer.from(embedding.f32, "base64");
    const vector = new Float32Array(Math.floor(bytes.length / 4));
    new Uint8Array(vector.buffer).set(bytes.subarray(0, vector.length * 4));
    decoded = { embedder: embedding.embedder, vector };
  }
  return { namespace, key, ...rest, embedding: decoded };
}

function unreadable(namespace: string, key: string, why?: string): Error {
  return new Error(
    `Stored entry "${key}" in namespace "${namespace}" is unreadable ` +
      `(${why}); delete it or restore a backup`,
  );
}

export function dequantise(i8: Int8Array, scale: number): Float32Array {
  const vector = new Float32Array(i8.length);
  for (let i = 0; i < i8.length; i++) vector[i] = i8[i] * scale;
  return vector;
}

/** The entry, or null when the record does not decode (`unreadable` hears why). */
export function tryDecode(
  namespace: string,
  key: string,
  value: StoreValue,
  unreadable?: (error: unknown) => void,
): StoredEntry | null {
  try {
    return decodeEntry(namespace, key, value);
  } catch (error) {
    unreadable?.(error);
    return null;
  }
}

export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodeCursor(text: string, tags: string[]): ListCursor {
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
