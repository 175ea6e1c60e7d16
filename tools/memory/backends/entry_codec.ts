// Binary forms of KvBackend's entry records and journal rows (Store binary
// values: no JSON field names, no base64).
//
// Entry record (no vector: kv_index.ts keeps it in the journal, then the
// snapshot):
//   0x45, flags (1 sensitive, 2 created_at as ms, 4 updated_at as ms),
//   created_at, updated_at (float64 ms when its flag is set: an ISO time
//   that Date gives back exactly; else a string),
//   tags (varint count, strings), then the value's UTF-8 to the end.
// Journal row ["j", ns, key]:
//   0x4a, write id (string), flags (1 vector, 2 embedder without vector),
//   embedder (string) when either flag, then with 1: scale (float32),
//   dimensions (varint), int8 components.
// A string is a varint byte length and UTF-8; integers little-endian.

import type { Embedding, StoredEntry } from "../model.ts";
import { quantiseRow } from "../search_vectors.ts";

const ENTRY = 0x45;
const JOURNAL = 0x4a;
const SENSITIVE = 1;
const CREATED_MS = 2;
const UPDATED_MS = 4;
const VECTOR = 1;
const EMBEDDER_ONLY = 2;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A growing byte buffer. */
class Writer {
  #bytes: Uint8Array;
  #view: DataView;
  length = 0;

  /** `size`: the bytes expected, so a record is written without growing. */
  constructor(size = 256) {
    this.#bytes = new Uint8Array(size);
    this.#view = new DataView(this.#bytes.buffer);
  }

  #room(n: number): void {
    if (this.length + n <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(this.length + n, this.length * 2));
    grown.set(this.#bytes.subarray(0, this.length));
    this.#bytes = grown;
    this.#view = new DataView(grown.buffer);
  }

  byte(b: number): void {
    this.#room(1);
    this.#bytes[this.length++] = b;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.byte((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    this.byte(n);
  }

  f64(n: number): void {
    this.#room(8);
    this.#view.setFloat64(this.length, n, true);
    this.length += 8;
  }

  f32(n: number): void {
    this.#room(4);
    this.#view.setFloat32(this.length, n, true);
    this.length += 4;
  }

  raw(bytes: Uint8Array): void {
    this.#room(bytes.length);
    this.#bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  string(text: string): void {
    const bytes = encoder.encode(text);
    this.varint(bytes.length);
    this.raw(bytes);
  }

  /** UTF-8 of `text` without a length (the rest of the record). */
  tail(text: string): void {
    // One byte per character first (ASCII text fits); the rest, if any, after growing.
    this.#room(text.length);
    const first = encoder.encodeInto(text, this.#bytes.subarray(this.length));
    this.length += first.written;
    if (first.read < text.length) {
      const rest = text.slice(first.read);
      this.#room(rest.length * 3);
      this.length += encoder.encodeInto(
        rest,
        this.#bytes.subarray(this.length),
      ).written;
    }
  }

  done(): Uint8Array {
    return this.#bytes.slice(0, this.length);
  }
}

/** Reads what Writer wrote; any overrun throws. */
class Reader {
  #at = 0;
  #view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  byte(): number {
    if (this.#at >= this.bytes.length) throw new RangeError("truncated");
    return this.bytes[this.#at++];
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
      if (scale > 2 ** 35) throw new RangeError("bad varint");
    }
  }

  f64(): number {
    const n = this.#view.getFloat64(this.#at, true);
    this.#at += 8;
    return n;
  }

  f32(): number {
    const n = this.#view.getFloat32(this.#at, true);
    this.#at += 4;
    return n;
  }

  raw(n: number): Uint8Array {
    if (this.#at + n > this.bytes.length) throw new RangeError("truncated");
    const out = this.bytes.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }

  string(): string {
    return decoder.decode(this.raw(this.varint()));
  }

  rest(): string {
    return decoder.decode(this.raw(this.bytes.length - this.#at));
  }

  get done(): boolean {
    return this.#at === this.bytes.length;
  }
}

type EntryFields = Pick<
  StoredEntry,
  "value" | "tags" | "sensitive" | "created_at" | "updated_at"
>;

/** The time as ms when Date gives the same text back, else null. */
function asMs(time: string): number | null {
  const ms = Date.parse(time);
  if (!Number.isFinite(ms)) return null;
  return new Date(ms).toISOString() === time ? ms : null;
}

export function encodeRecord(entry: EntryFields): Uint8Array {
  let size = 24 + entry.value.length;
  for (const tag of entry.tags) size += tag.length + 2;
  const out = new Writer(size);
  const created = asMs(entry.created_at);
  const updated = asMs(entry.updated_at);
  out.byte(ENTRY);
  out.byte(
    (entry.sensitive ? SENSITIVE : 0) | (created === null ? 0 : CREATED_MS) |
      (updated === null ? 0 : UPDATED_MS),
  );
  if (created === null) out.string(entry.created_at);
  else out.f64(created);
  if (updated === null) out.string(entry.updated_at);
  else out.f64(updated);
  out.varint(entry.tags.length);
  for (const tag of entry.tags) out.string(tag);
  out.tail(entry.value);
  return out.done();
}

/** Null when the bytes are not a whole entry record. */
export function decodeRecord(bytes: Uint8Array): EntryFields | null {
  try {
    const input = new Reader(bytes);
    if (input.byte() !== ENTRY) return null;
    const flags = input.byte();
    const time = (flag: number) =>
      flags & flag ? new Date(input.f64()).toISOString() : input.string();
    const created_at = time(CREATED_MS);
    const updated_at = time(UPDATED_MS);
    const tags: string[] = [];
    for (let n = input.varint(); n > 0; n--) tags.push(input.string());
    const value = input.rest();
    return {
      value,
      tags,
      sensitive: (flags & SENSITIVE) !== 0,
      created_at,
      updated_at,
    };
  } catch {
    return null;
  }
}

/** A journal row: the write's id and the vector it indexed (null: none). */
export interface JournalRow {
  id: string;
  embedding: Embedding | null;
}

export function encodeJournal(
  id: string,
  embedding: Embedding | null,
): Uint8Array {
  const row = embedding && quantiseRow(embedding.vector);
  const out = new Writer(
    16 + id.length + (embedding ? embedding.embedder.length : 0) +
      (row ? row.i8.length : 0),
  );
  out.byte(JOURNAL);
  out.string(id);
  out.byte(row ? VECTOR : embedding ? EMBEDDER_ONLY : 0);
  if (embedding) out.string(embedding.embedder);
  if (row) {
    out.f32(row.scale);
    out.varint(row.i8.length);
    out.raw(new Uint8Array(row.i8.buffer, row.i8.byteOffset, row.i8.length));
  }
  return out.done();
}

/**
 * A journal row as written by this version, or null. An embedder without a
 * vector (zero vector) comes back with an empty vector: indexed as "made by
 * that embedder", with no row to rank.
 */
export function decodeJournal(bytes: Uint8Array): JournalRow | null {
  try {
    const input = new Reader(bytes);
    if (input.byte() !== JOURNAL) return null;
    const id = input.string();
    const flags = input.byte();
    if (!(flags & (VECTOR | EMBEDDER_ONLY))) {
      return input.done ? { id, embedding: null } : null;
    }
    const embedder = input.string();
    let vector = new Float32Array(0);
    if (flags & VECTOR) {
      const scale = input.f32();
      const raw = input.raw(input.varint());
      const i8 = new Int8Array(raw.buffer, raw.byteOffset, raw.length);
      vector = new Float32Array(i8.length);
      for (let i = 0; i < i8.length; i++) vector[i] = i8[i] * scale;
    }
    return input.done ? { id, embedding: { embedder, vector } } : null;
  } catch {
    return null;
  }
}

/** The write id of a journal row as written by this version, or null. */
export function journalId(bytes: Uint8Array): string | null {
  try {
    const input = new Reader(bytes);
    return input.byte() === JOURNAL ? input.string() : null;
  } catch {
    return null;
  }
}
