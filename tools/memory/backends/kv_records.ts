// KvBackend's record layout in the Store and the codecs of its entry records,
// list cursors and counters, with the paging helper its parts share.
//
// Layout (under the store given, which the daemon scopes to ["svc-memory"]):
//   ["e", ns, key]             entry record (see EntryRecord)
//   ["t", ns, tag, key]        null: tag index, for list-by-tag paging
//   ["n", ns]                  number of entries in ns (absent when 0)
//   ["s", ns, session]         { count }: messages in the session
//   ["m", ns, session, seq]    message; seq is zero-padded, so key order is time order

import { Buffer } from "node:buffer";
import { z } from "zod";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  type Store,
  type StoreEntry,
  type StoreKey,
} from "../../../platform/store.ts";
import type { StoredEntry } from "../model.ts";

/** Commit attempts before a write that keeps losing races gives up. */
export const MAX_ATTEMPTS = 20;

const EntryRecord = z.object({
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  /**
   * `i8` + `scale`: base64 of the vector quantised to int8 (component =
   * i8 × scale), a quarter of Float32's size. `f32`: base64 of little-endian
   * Float32 bytes, as records written before quantisation hold; still read.
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

export function countValue(count: JsonValue | null): number {
  return typeof count === "number" && Number.isInteger(count) && count > 0
    ? count
    : 0;
}

export function encodeEntry(entry: StoredEntry): JsonValue {
  const vector = entry.embedding?.vector;
  return {
    value: entry.value,
    tags: entry.tags,
    sensitive: entry.sensitive,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
    embedding: entry.embedding && vector
      ? { embedder: entry.embedding.embedder, ...quantise(vector) }
      : null,
  };
}

/** The record of an entry, and the entry as reading that record back gives it (vector quantised) without parsing it. */
export function encodeStored(
  entry: StoredEntry,
): { record: JsonValue; stored: StoredEntry } {
  const vector = entry.embedding?.vector;
  const quantised = entry.embedding && vector ? quantiseBytes(vector) : null;
  const { value, tags, sensitive, created_at, updated_at } = entry;
  const fields = { value, tags, sensitive, created_at, updated_at };
  return {
    record: {
      ...fields,
      embedding: entry.embedding && quantised
        ? {
          embedder: entry.embedding.embedder,
          i8: Buffer.from(quantised.bytes.buffer).toString("base64"),
          scale: quantised.scale,
        }
        : null,
    },
    stored: {
      namespace: entry.namespace,
      key: entry.key,
      ...fields,
      tags: [...tags],
      embedding: entry.embedding && quantised
        ? {
          embedder: entry.embedding.embedder,
          vector: dequantiseBytes(quantised.bytes, quantised.scale),
        }
        : null,
    },
  };
}

export function decodeEntry(
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
  if (embedding && "i8" in embedding) {
    decoded = {
      embedder: embedding.embedder,
      vector: dequantise(embedding.i8, embedding.scale),
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

/** Symmetric int8 quantisation: the largest component maps to ±127. */
export function quantise(vector: Float32Array): { i8: string; scale: number } {
  const { bytes, scale } = quantiseBytes(vector);
  return {
    i8: Buffer.from(bytes.buffer).toString("base64"),
    scale,
  };
}

function quantiseBytes(
  vector: Float32Array,
): { bytes: Int8Array; scale: number } {
  let max = 0;
  for (let i = 0; i < vector.length; i++) {
    max = Math.max(max, Math.abs(vector[i]));
  }
  const scale = max > 0 && Number.isFinite(max) ? max / 127 : 0;
  const bytes = new Int8Array(vector.length);
  if (scale > 0) {
    for (let i = 0; i < vector.length; i++) {
      bytes[i] = Math.round(vector[i] / scale);
    }
  }
  return { bytes, scale };
}

/** What dequantise gives for the base64 of `bytes`. */
function dequantiseBytes(bytes: Int8Array, scale: number): Float32Array {
  const vector = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) vector[i] = bytes[i] * scale;
  return vector;
}

export function dequantise(i8: string, scale: number): Float32Array {
  const bytes = Buffer.from(i8, "base64");
  const vector = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    // Buffer bytes are unsigned: reinterpret as two's complement.
    const b = bytes[i];
    vector[i] = (b > 127 ? b - 256 : b) * scale;
  }
  return vector;
}

export function tryDecode(
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
