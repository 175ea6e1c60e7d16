// Byte streams of KvBackend's index snapshots (kv_index.ts) in the Store: a
// stream is binary parts, written a few per commit and read a few at a time,
// copied straight into their place (snapshots of format 2 have base64 parts). A stream saved with the hashes of its
// parts (the vector rows) rewrites only the parts that changed since the
// last save and refers to the older parts where they are. And the
// fingerprint of the tokenizer a snapshot was made with.

import { Buffer } from "node:buffer";
import type { Mutation, Store, StoreKey } from "../../../platform/store/mod.ts";

/**
 * Bytes per part: a binary value of 60,000 bytes stays under the KV store's
 * 60 KiB inline value, so a part is one KV row (no chunk lookup).
 */
export const PART_BYTES = 60_000;
/** Bytes per base64 part in snapshots of format 2. */
export const BASE64_PART_BYTES = 45_000;
/** Parts per commit when saving. */
const PARTS_PER_COMMIT = 10;
/**
 * Parts per getMany and reads in flight when loading. Measured at 100k
 * entries: 2 × 2 leaves the process 35 MiB smaller after the load than
 * 4 × 10 (V8's heap and the allocator grow with larger reads), as fast.
 */
const PARTS_PER_READ = 2;
const READERS = 2;
/** Keys per getMany or commit of journal rows and snapshot parts (kv_index*.ts). */
export const BATCH = 90;

/**
 * The store failed while a snapshot was read (not the snapshot's fault): the
 * snapshot may hold the only copy of its vectors, so it must not be replaced.
 */
export class SnapshotReadFailed extends Error {
  constructor(cause: unknown) {
    super("the store failed while reading the index snapshot", { cause });
    this.name = "SnapshotReadFailed";
  }
}

/** Where a part of a stream is kept (the id of the snapshot that wrote it) and its bytes' hash. */
export type PartRef = [source: string, hash: string];

/** Tokenizer output on a fixed text: a change of stemmer, stop words or splitting changes it. */
export const TOKENIZER_PROBE =
  "The Runners were running quickly past 3 houses in Zürich on " +
  "2024-05-01; naïve résumés, don't stop! 東京タワー user.preferences/theme-dark " +
  "analysis renovating relaxation I've hundred embedded\n" +
  "[7 May 2023] Caroline: my kids went to mom's on the 3rd, won't colour it";
/**
 * `fingerprintOf(tokenize(TOKENIZER_PROBE))`, pinned so no start tokenizes:
 * tests/tools/memory/tokenizer_fingerprint_test.ts recomputes it and fails
 * on a tokenizer change until this is set to the new value.
 */
const TOKENIZER_FINGERPRINT = "99156c0b";

export function tokenizerFingerprint(): string {
  return TOKENIZER_FINGERPRINT;
}

/** The fingerprint of a tokenizer's output on the probe. */
export function fingerprintOf(tokens: string[]): string {
  return fnv1a(tokens.join(" "));
}

/** Parts of a stream of `bytes` bytes. */
export function partsOf(bytes: number, partBytes = PART_BYTES): number {
  return Math.ceil(bytes / partBytes);
}

/** Writes `bytes` as base64 parts under `prefix`; returns how many. */
export async function writeStream(
  store: Store,
  prefix: StoreKey,
  bytes: Uint8Array,
): Promise<number> {
  const parts = partsOf(bytes.length);
  await writeParts(store, Array.from({ length: parts }, (_, i) => i), (i) => [
    [...prefix, i],
    bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES),
  ]);
  return parts;
}

/**
 * Writes the parts of `bytes` whose hash differs from `previous`'s part at the
 * same place, under `keyOf(id, i)`; returns where every part is kept now.
 */
export async function writeChangedParts(
  store: Store,
  keyOf: (source: string, i: number) => StoreKey,
  id: string,
  bytes: Uint8Array,
  previous: readonly PartRef[],
): Promise<PartRef[]> {
  const refs: PartRef[] = [];
  const changed: number[] = [];
  for (let i = 0; i < partsOf(bytes.length); i++) {
    const part = bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES);
    const hash = await hashOf(part);
    const old = previous[i];
    if (old && old[1] === hash) refs.push(old);
    else {
      refs.push([id, hash]);
      changed.push(i);
    }
  }
  await writeParts(store, changed, (i) => [
    keyOf(id, i),
    bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES),
  ]);
  return refs;
}

async function writeParts(
  store: Store,
  which: readonly number[],
  part: (i: number) => [StoreKey, Uint8Array],
): Promise<void> {
  for (let first = 0; first < which.length; first += PARTS_PER_COMMIT) {
    const mutations: Mutation[] = which.slice(first, first + PARTS_PER_COMMIT)
      .map((i) => {
        const [key, bytes] = part(i);
        return { type: "set", key, value: bytes };
      });
    const result = await store.commit({ mutations });
    if (!result.ok) throw new Error("snapshot part write refused");
  }
}

/** 64 bits of the part's SHA-256, as hex. */
async function hashOf(bytes: Uint8Array): Promise<string> {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", copy));
  return Buffer.from(digest.subarray(0, 8)).toString("hex");
}

/**
 * Reads the parts at `keyOf(i)` into `target`, which they must fill exactly:
 * binary parts of PART_BYTES, or base64 parts of BASE64_PART_BYTES (format 2).
 */
export async function readStream(
  store: Store,
  keyOf: (i: number) => StoreKey,
  target: Uint8Array | Int8Array,
  partBytes = PART_BYTES,
): Promise<void> {
  const parts = Math.ceil(target.byteLength / partBytes);
  const bytes = new Uint8Array(
    target.buffer,
    target.byteOffset,
    target.byteLength,
  );
  // A few reads in flight: they overlap, and only their parts' text is held at once.
  let next = 0;
  const reader = async () => {
    while (next < parts) {
      const first = next;
      next += PARTS_PER_READ;
      const keys: StoreKey[] = [];
      for (let i = first; i < Math.min(parts, first + PARTS_PER_READ); i++) {
        keys.push(keyOf(i));
      }
      let records;
      try {
        records = await store.getMany(keys);
      } catch (error) {
        throw new SnapshotReadFailed(error);
      }
      records.forEach((record, j) =>
        decodePart(record?.bytes ?? record?.value, first + j)
      );
    }
  };
  const decodePart = (value: unknown, i: number) => {
    const expected = Math.min(partBytes, bytes.length - i * partBytes);
    const into = bytes.subarray(i * partBytes, i * partBytes + expected);
    if (value instanceof Uint8Array) {
      if (value.length !== expected) throw new Error("snapshot part damaged");
      into.set(value);
      return;
    }
    if (typeof value !== "string") throw new Error("snapshot part missing");
    // Decoded straight into place: no buffer per part.
    let written = -1;
    try {
      const result = into.setFromBase64(value);
      if (result.read === value.length) written = result.written;
    } catch {
      // Not base64: damaged.
    }
    if (written !== expected) throw new Error("snapshot part damaged");
  };
  await Promise.all(Array.from({ length: READERS }, reader));
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
