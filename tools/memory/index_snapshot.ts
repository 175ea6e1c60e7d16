// The binary form of a SearchIndex snapshot (IndexData): a small JSON header
// (keys, terms, tags, embedders) followed by the typed-array sections, each
// length-prefixed and 4-byte aligned. Little-endian, as Deno's platforms are.
// The vector rows are not in it: they are stored as separate byte streams
// (one per slab, `data.slabs[i].rows`) and read straight into the slab's wasm
// memory. Each slab also keeps its rows' scales (Float32, "AMX3"; an "AMX2"
// snapshot has none and reads each row as a unit vector, which embedders
// return). Integer sections whose values are small (lengths, tag ids, posting
// slots as zigzag deltas, term frequencies, a slab's row → slot map) are
// LEB128 varints: about a third of their fixed-width size. Decoded sections
// are fresh arrays, so the snapshot's bytes are garbage once decoded.
// A snapshot that does not parse is rebuilt from the entries by the caller.

import type { IndexData } from "./search_index.ts";
import { VectorSlab } from "./search_vectors.ts";
import { ArrayStrings, stringsOf } from "./index_arrays.ts";

const MAGIC = 0x33584d41; // "AMX3"
/** Snapshots written before the rows' scales were kept. */
const MAGIC_2 = 0x32584d41; // "AMX2"

export interface IndexHeader {
  keys: string[];
  embedders: string[];
  tags: string[];
  terms: string[];
  slabs: { embedder: number; dim: number; count: number }[];
}

/** What a header says of `data`: its names, and the shape of its slabs. */
export function indexHeaderOf(data: IndexData): IndexHeader {
  const { embedders, tags } = data;
  const slabs = data.slabs.map(({ embedder, dim, count }) => ({
    embedder,
    dim,
    count,
  }));
  const keys = stringsOf(data.keys);
  return { keys, embedders, tags, terms: stringsOf(data.terms), slabs };
}

/** The index's data from a header and its columns (slabs are added after). */
export function indexDataOf(
  header: IndexHeader,
  columns: Omit<IndexData, "keys" | "embedders" | "tags" | "terms" | "slabs">,
): IndexData {
  const { embedders, tags } = header;
  return {
    keys: new ArrayStrings(header.keys),
    embedders,
    tags,
    terms: new ArrayStrings(header.terms),
    ...columns,
    slabs: [],
  };
}

type Section =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Uint32Array
  | Float32Array;

export function encodeIndex(data: IndexData): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(indexHeaderOf(data)));
  const sections: Section[] = [
    json,
    packVarints(data.lengths, false),
    data.sensitive,
    data.embedderOf,
    data.tagOffsets,
    packVarints(data.tagIds, false),
    data.postingOffsets,
    packVarints(data.postingSlots, true),
    packVarints(data.postingTfs, false),
    ...data.slabs.flatMap((s) => [
      packVarints(s.slots, true),
      s.invNorms,
      s.scales,
    ]),
  ];
  let size = 4;
  for (const s of sections) size += 4 + pad(s.byteLength);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  let at = 4;
  for (const s of sections) {
    view.setUint32(at, s.byteLength, true);
    out.set(new Uint8Array(s.buffer, s.byteOffset, s.byteLength), at + 4);
    at += 4 + pad(s.byteLength);
  }
  return out;
}

/**
 * Throws on anything malformed; SearchIndex.fromData checks the parts agree.
 * Each slab's `rows` is a view of a prepared slab's memory, for the caller to
 * fill with that slab's row bytes before SearchIndex.fromData.
 */
export function decodeIndex(bytes: Uint8Array<ArrayBuffer>): IndexData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = bytes.byteLength < 8 ? 0 : view.getUint32(0, true);
  if (magic !== MAGIC && magic !== MAGIC_2) {
    throw new Error("index snapshot: not a snapshot");
  }
  let at = 4;
  /** The next section, as a view of `bytes`. */
  const next = (): Uint8Array<ArrayBuffer> => {
    if (at + 4 > bytes.byteLength) throw new Error("index snapshot: truncated");
    const length = view.getUint32(at, true);
    const start = bytes.byteOffset + at + 4;
    if (at + 4 + length > bytes.byteLength) {
      throw new Error("index snapshot: truncated");
    }
    at += 4 + pad(length);
    return new Uint8Array(bytes.buffer, start, length);
  };
  const header = parseIndexHeader(
    JSON.parse(new TextDecoder().decode(next())),
  );
  // Sections start 4-byte aligned when `bytes` does (a fresh buffer); else copied.
  const aligned = (section: Uint8Array<ArrayBuffer>, size: number) => {
    if (section.byteLength % size) {
      throw new Error("index snapshot: misaligned");
    }
    return section.byteOffset % 4 === 0
      ? section
      : new Uint8Array(section.buffer.slice(
        section.byteOffset,
        section.byteOffset + section.byteLength,
      ));
  };
  // Copies: nothing decoded keeps the snapshot's bytes alive.
  const u32 = () => {
    const s = aligned(next(), 4);
    return new Uint32Array(s.buffer, s.byteOffset, s.byteLength / 4).slice();
  };
  const u16 = () => {
    const s = aligned(next(), 2);
    return new Uint16Array(s.buffer, s.byteOffset, s.byteLength / 2).slice();
  };
  const n = header.keys.length;
  const lengths = unpackVarints(next(), new Uint32Array(n), false);
  const sensitive = next().slice();
  const embedderOf = u16();
  const tagOffsets = u32();
  if (tagOffsets.length !== n + 1) {
    throw new Error("index snapshot: tag offsets disagree with its keys");
  }
  const tagIds = unpackVarints(next(), new Uint32Array(tagOffsets[n]), false);
  const postingOffsets = u32();
  const postings = postingOffsets.at(-1) ?? 0;
  const data = indexDataOf(header, {
    lengths,
    sensitive,
    embedderOf,
    tagOffsets,
    tagIds,
    postingOffsets,
    postingSlots: unpackVarints(next(), new Uint32Array(postings), true),
    postingTfs: unpackVarints(next(), new Uint16Array(postings), false),
  });
  for (const slabHeader of header.slabs) {
    const slots = unpackVarints(
      next(),
      new Uint32Array(slabHeader.count),
      true,
    );
    const f32 = () => {
      const s = aligned(next(), 4);
      return new Float32Array(s.buffer, s.byteOffset, s.byteLength / 4)
        .slice();
    };
    const invNorms = f32();
    // Without scales a row reads back as a unit vector (int8 × 1/‖int8‖).
    const scales = magic === MAGIC ? f32() : invNorms.slice();
    const { slab, rows } = VectorSlab.prepare(
      slabHeader.dim,
      slabHeader.count,
      slots,
      invNorms,
      scales,
    );
    data.slabs.push({
      dim: slabHeader.dim,
      count: slabHeader.count,
      rows,
      slots,
      invNorms,
      scales,
      slab,
      embedder: slabHeader.embedder,
    });
  }
  if (at !== bytes.byteLength) {
    throw new Error("index snapshot: trailing bytes");
  }
  return data;
}

/**
 * LEB128 varints of `values`; with `delta`, of the zigzag differences between
 * neighbours (posting slots and row slots mostly ascend: 1–2 bytes each).
 */
function packVarints(
  values: Uint32Array | Uint16Array,
  delta: boolean,
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(values.length * 5);
  let at = 0;
  let previous = 0;
  for (let i = 0; i < values.length; i++) {
    let v = values[i];
    if (delta) {
      const d = v - previous;
      previous = v;
      v = d >= 0 ? d * 2 : -d * 2 - 1;
    }
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    out[at++] = v;
  }
  return out.slice(0, at);
}

/** Fills `into` from packVarints' bytes, which must hold exactly its length. */
function unpackVarints<T extends Uint32Array | Uint16Array>(
  bytes: Uint8Array,
  into: T,
  delta: boolean,
): T {
  const max = into instanceof Uint16Array ? 0xffff : 0xffffffff;
  let at = 0;
  let previous = 0;
  for (let i = 0; i < into.length; i++) {
    let v = 0;
    let scale = 1;
    let byte = 0x80;
    while (byte & 0x80) {
      if (at >= bytes.length || scale > 2 ** 35) {
        throw new Error("index snapshot: bad varint section");
      }
      byte = bytes[at++];
      v += (byte & 0x7f) * scale;
      scale *= 128;
    }
    if (delta) {
      v = previous + (v % 2 ? -(v + 1) / 2 : v / 2);
      previous = v;
    }
    if (v < 0 || v > max) throw new Error("index snapshot: value out of range");
    into[i] = v;
  }
  if (at !== bytes.length) {
    throw new Error("index snapshot: bad varint section");
  }
  return into;
}

function pad(n: number): number {
  return (n + 3) & ~3;
}

/** For the JSON headers' checks: a list of strings. */
export const isStrings = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === "string");

/** For the JSON headers' checks: a count (an integer, 0 or more). */
export const isCount = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= 0;

/** The slabs of a snapshot's or an index image's JSON header, checked; null when one is not a slab's. */
export function slabHeaders(
  value: readonly unknown[],
): IndexHeader["slabs"] | null {
  const slabs: IndexHeader["slabs"] = [];
  for (const s of value) {
    if (
      typeof s !== "object" || s === null || !("embedder" in s) ||
      !isCount(s.embedder) || !("dim" in s) || !isCount(s.dim) ||
      !("count" in s) || !isCount(s.count)
    ) return null;
    slabs.push({ embedder: s.embedder, dim: s.dim, count: s.count });
  }
  return slabs;
}

/** The JSON header of a snapshot (or of an index image), checked. */
export function parseIndexHeader(value: unknown): IndexHeader {
  if (
    typeof value !== "object" || value === null ||
    !("keys" in value) || !isStrings(value.keys) ||
    !("embedders" in value) || !isStrings(value.embedders) ||
    !("tags" in value) || !isStrings(value.tags) ||
    !("terms" in value) || !isStrings(value.terms) ||
    !("slabs" in value) || !Array.isArray(value.slabs)
  ) throw new Error("index snapshot: bad header");
  const slabs = slabHeaders(value.slabs);
  if (!slabs) throw new Error("index snapshot: bad slab header");
  return {
    keys: value.keys,
    embedders: value.embedders,
    tags: value.tags,
    terms: value.terms,
    slabs,
  };
}
