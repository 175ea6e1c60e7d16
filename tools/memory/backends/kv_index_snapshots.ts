// Snapshots of KvBackend's search indexes in the Store: the head that names
// one, writing one (its vector rows beside the last snapshot's where they did
// not change), reading one back, and dropping parts no head refers to. Apart
// from kv_index.ts, which decides when to save and how to load.

import { z } from "zod";
import type { Store, StoreKey } from "../../../platform/store/mod.ts";
import { decodeIndex, encodeIndex } from "../index_snapshot.ts";
import { type IndexData, SearchIndex } from "../search_index.ts";
import {
  BASE64_PART_BYTES,
  BATCH,
  PART_BYTES,
  type PartRef,
  partsOf,
  readStream,
  tokenizerFingerprint,
  writeChangedParts,
  writeStream,
} from "./kv_index_parts.ts";
import { listAll } from "./kv_records.ts";

/**
 * Bump when the snapshot's binary form or meaning changes. 3: binary parts,
 * and the snapshot is the vectors' home; 2 (base64 parts) is still read.
 */
export const INDEX_FORMAT = 3;
const BASE64_FORMAT = 2;

const Head = z.object({
  format: z.number(),
  tokenizer: z.string(),
  id: z.string(),
  parts: z.number().int().min(0),
  bytes: z.number().int().min(0),
  /** Bytes of each slab's vector rows, stored apart (see index_snapshot.ts). */
  rows: z.array(z.number().int().min(0)),
  /** Per slab, per part of its rows: the snapshot id holding it and its hash. */
  row_parts: z.array(z.array(z.tuple([z.string(), z.string()]))),
  entries: z.number().int().min(0),
  saved_at: z.string(),
});

export type SnapshotHead = z.infer<typeof Head>;

/**
 * Writes `data` (an index's export) as a new snapshot of `namespace` (its vector rows' parts
 * unchanged since `before` stay where they are) and returns its head, not
 * yet stored.
 */
export async function writeSnapshot(
  store: Store,
  namespace: string,
  data: IndexData,
  before: PartRef[][],
): Promise<SnapshotHead> {
  const blob = encodeIndex(data);
  const entries = data.keys.length;
  const id = crypto.randomUUID();
  const parts = await writeStream(store, ["y", namespace, id], blob);
  // Rows change in place or at the end: parts unchanged since the last head stay where they are.
  const rowParts: PartRef[][] = [];
  for (const [k, slab] of data.slabs.entries()) {
    const rows = slab.rows;
    rowParts.push(
      await writeChangedParts(
        store,
        (source, i) => ["y", namespace, source, "r", k, i],
        id,
        new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength),
        before[k] ?? [],
      ),
    );
  }
  return {
    format: INDEX_FORMAT,
    tokenizer: tokenizerFingerprint(),
    id,
    parts,
    bytes: blob.length,
    rows: data.slabs.map((slab) => slab.rows.byteLength),
    row_parts: rowParts,
    entries,
    saved_at: new Date().toISOString(),
  };
}

/**
 * The index a head describes (format 2 or 3). `strict`: only one made with
 * this tokenizer; else any that decodes (its vectors, for a rebuild).
 * `rowParts`: where its vector rows are, when the next save may refer to them.
 */
export async function readSnapshot(
  store: Store,
  namespace: string,
  value: unknown,
  strict: boolean,
): Promise<{ index: SearchIndex; rowParts?: PartRef[][] }> {
  const head = parseHead(value, strict);
  const index = indexOf(head, await readParts(store, namespace, head));
  // Parts of format 2 are cut elsewhere: the next save writes every row part anew.
  const rowParts = strict ? rowPartsOf(head) : undefined;
  return rowParts ? { index, rowParts } : { index };
}

/** The head `value` names, if this code reads its format (`strict`: and its tokenizer). */
export function parseHead(value: unknown, strict: boolean): SnapshotHead {
  const parsed = Head.safeParse(value);
  if (!parsed.success) throw new Error("snapshot head unreadable");
  const head = parsed.data;
  if (head.format !== INDEX_FORMAT && head.format !== BASE64_FORMAT) {
    throw new Error(
      `snapshot format ${head.format}, expected ${INDEX_FORMAT}`,
    );
  }
  if (strict && head.tokenizer !== tokenizerFingerprint()) {
    throw new Error("snapshot made with another tokenizer");
  }
  return head;
}

/** Where the next save may refer to the head's vector rows (none for format 2). */
export function rowPartsOf(head: SnapshotHead): PartRef[][] | undefined {
  return head.format === INDEX_FORMAT ? head.row_parts : undefined;
}

/**
 * The index `data` makes (read from the head's store parts or from an index
 * image), once its parts agree with each other and with the head.
 */
export function indexOf(head: SnapshotHead, data: IndexData): SearchIndex {
  if (
    data.slabs.length !== head.rows.length ||
    head.row_parts.length !== head.rows.length
  ) {
    throw new Error("snapshot head disagrees with its vector slabs");
  }
  for (const [k, slab] of data.slabs.entries()) {
    if (slab.rows.byteLength !== head.rows[k]) {
      throw new Error("snapshot head disagrees with its vector rows");
    }
  }
  const index = SearchIndex.fromData(data);
  if (index.size !== head.entries) {
    throw new Error("snapshot entry count disagrees with its head");
  }
  return index;
}

/** The head's index data from its store parts (its rows read into their slabs). */
async function readParts(
  store: Store,
  namespace: string,
  head: SnapshotHead,
): Promise<IndexData> {
  const partBytes = head.format === BASE64_FORMAT
    ? BASE64_PART_BYTES
    : PART_BYTES;
  if (head.parts !== partsOf(head.bytes, partBytes)) {
    throw new Error("snapshot head disagrees with its size");
  }
  const blob = new Uint8Array(head.bytes);
  await readStream(
    store,
    (i) => ["y", namespace, head.id, i],
    blob,
    partBytes,
  );
  const data = decodeIndex(blob);
  if (
    data.slabs.length !== head.rows.length ||
    head.row_parts.length !== head.rows.length
  ) {
    throw new Error("snapshot head disagrees with its vector slabs");
  }
  for (const [k, slab] of data.slabs.entries()) {
    const refs = head.row_parts[k];
    if (
      slab.rows.byteLength !== head.rows[k] ||
      refs.length !== partsOf(head.rows[k], partBytes)
    ) throw new Error("snapshot head disagrees with its vector rows");
    await readStream(
      store,
      (i) => ["y", namespace, refs[i][0], "r", k, i],
      slab.rows,
      partBytes,
    );
  }
  return data;
}

/** Deletes the snapshot parts of `namespace` that `pick` picks. */
export async function dropParts(
  store: Store,
  namespace: string,
  pick: (key: StoreKey) => boolean,
): Promise<void> {
  const doomed: StoreKey[] = [];
  for await (const row of listAll(store, ["y", namespace])) {
    if (pick(row.key)) doomed.push(row.key);
  }
  for (let i = 0; i < doomed.length; i += BATCH) {
    await store.commit({
      mutations: doomed.slice(i, i + BATCH).map((key) => ({
        type: "delete",
        key,
      })),
    });
  }
}

/** Whether the part at `key` (["y", ns, id, …]) belongs to `head`. */
export function kept(head: SnapshotHead, key: StoreKey): boolean {
  if (key[3] !== "r") return key[2] === head.id;
  const [k, i] = [key[4], key[5]];
  if (typeof k !== "number" || typeof i !== "number") return false;
  return head.row_parts[k]?.[i]?.[0] === key[2];
}
