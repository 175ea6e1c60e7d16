// A local file image of a namespace's index snapshot, for fast starts: the
// snapshot's arrays as they are in memory (fixed width, aligned), so a start
// reads them with four file reads into the arrays themselves (the vector
// rows straight into the slab's wasm memory) instead of ~600 Store reads of
// 60 KB parts, each copied twice, and varint sections decoded into fresh
// arrays (at 100k entries ~0.9 s of CPU against ~0.3 s).
//
// A cache only: the Store's snapshot (index_snapshot.ts, kv_index*.ts) stays
// the truth, and every daemon on a shared store keeps its own images. An
// image names the snapshot it was made from (the head's id) and its
// namespace; one of another snapshot (someone saved since), with sizes that
// disagree with the file's, or whose checksum disagrees (a torn or damaged
// write) is not used: the start reads the Store's snapshot instead. Written
// to a temp file and renamed, so a reader never sees a half-written image.
//
// Layout: a 24-byte prefix ("AMI1", version, the checksum's two 32-bit
// sums, the header's bytes, the sections' bytes), the JSON header (the
// snapshot's header, its id and namespace, the lengths of the variable
// sections), the sections (each 8-byte aligned from the sections' start),
// then each slab's rows. The checksum covers everything after the prefix.

import type { IndexData } from "./search_index.ts";
import { VectorSlab } from "./search_vectors.ts";
import {
  indexDataOf,
  type IndexHeader,
  indexHeaderOf,
  parseIndexHeader,
} from "./index_snapshot.ts";

const MAGIC = 0x31494d41; // "AMI1"
const VERSION = 1;
const PREFIX = 24;

interface ImageHeader extends IndexHeader {
  id: string;
  namespace: string;
  tag_ids: number;
  postings: number;
}

type Column =
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | Float32Array;

/** The image's data, or why it is not used. */
export type ImageRead =
  | { data: IndexData; problem?: undefined }
  | { data?: undefined; problem: string };

/** The columns of `data` in file order (rows apart). */
function columns(data: IndexData): Column[] {
  return [
    data.lengths,
    data.sensitive,
    data.embedderOf,
    data.tagOffsets,
    data.tagIds,
    data.postingOffsets,
    data.postingSlots,
    data.postingTfs,
    ...data.slabs.flatMap((s) => [s.slots, s.invNorms, s.scales]),
  ];
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

/**
 * Fletcher-style sums over 32-bit words (a tail is zero-padded): a word
 * changed, lost or moved changes them. Against damage and torn writes, not
 * tampering: four times cheaper than a multiplying hash (~10 ms at 100k).
 */
class Checksum {
  a = 0;
  b = 0;

  update(bytes: Uint8Array): void {
    const words = bytes.byteLength >>> 2;
    // Every piece starts 4-byte aligned in its buffer (fresh arrays, wasm memory).
    const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < words; i++) {
      a = (a + u32[i]) | 0;
      b = (b + a) | 0;
    }
    if (bytes.byteLength & 3) {
      let tail = 0;
      for (let i = words << 2; i < bytes.byteLength; i++) {
        tail |= bytes[i] << ((i & 3) * 8);
      }
      a = (a + tail) | 0;
      b = (b + a) | 0;
    }
    this.a = a;
    this.b = b;
  }
}

function bytesOf(column: Column | Int8Array): Uint8Array {
  return new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
}

/**
 * Writes `data` (the snapshot `id` of `namespace`, as exported for it) as the
 * image at `path`: to a temp file beside it, then renamed over it.
 */
export async function writeIndexImage(
  path: string,
  id: string,
  namespace: string,
  data: IndexData,
): Promise<void> {
  const header: ImageHeader = {
    id,
    namespace,
    ...indexHeaderOf(data),
    tag_ids: data.tagIds.length,
    postings: data.postingSlots.length,
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const parts = columns(data);
  const sectionBytes = parts.reduce((n, c) => n + align8(c.byteLength), 0);
  const checksum = new Checksum();
  checksum.update(json);
  // Written column by column (no copy of them all): the sums come out as
  // the reader's over the sections in one run, padding included, since an
  // update pads a tail to its word with zeros and the rest of the padding
  // is whole zero words.
  const sections: Uint8Array[] = [];
  for (const column of parts) {
    const bytes = bytesOf(column);
    const padding = new Uint8Array(align8(bytes.byteLength) - bytes.byteLength);
    checksum.update(bytes);
    checksum.update(
      padding.subarray(0, align8(bytes.byteLength) - align4(bytes.byteLength)),
    );
    sections.push(bytes, padding);
  }
  const rows = data.slabs.map((s) => bytesOf(s.rows));
  for (const r of rows) checksum.update(r);
  const prefix = new Uint8Array(PREFIX);
  const view = new DataView(prefix.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, VERSION, true);
  view.setUint32(8, checksum.a >>> 0, true);
  view.setUint32(12, checksum.b >>> 0, true);
  view.setUint32(16, json.byteLength, true);
  view.setUint32(20, sectionBytes, true);
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  // It holds keys and words of entries: the owner's only, as the secret key.
  const file = await Deno.open(temp, {
    write: true,
    create: true,
    truncate: true,
    mode: 0o600,
  });
  try {
    for (const piece of [prefix, json, ...sections, ...rows]) {
      await writeAll(file, piece);
    }
    file.close();
    await Deno.rename(temp, path);
  } catch (error) {
    try {
      file.close();
    } catch {
      // Closed already.
    }
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.byteLength) at += await file.write(bytes.subarray(at));
}

/** Fills `into` from `file`; false at an early end of file. */
async function readFull(file: Deno.FsFile, into: Uint8Array): Promise<boolean> {
  let at = 0;
  while (at < into.byteLength) {
    const n = await file.read(into.subarray(at));
    if (n === null) return false;
    at += n;
  }
  return true;
}

/**
 * The index data of the image at `path`, when it is snapshot `id` of
 * `namespace`, whole and undamaged; else why not (a missing file too).
 * SearchIndex.fromData still checks that its parts agree.
 */
export async function readIndexImage(
  path: string,
  id: string,
  namespace: string,
): Promise<ImageRead> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (error) {
    return {
      problem: error instanceof Deno.errors.NotFound
        ? "no image"
        : `image unreadable: ${String(error)}`,
    };
  }
  try {
    return await readOpen(file, id, namespace);
  } catch (error) {
    return { problem: `image damaged: ${String(error)}` };
  } finally {
    file.close();
  }
}

async function readOpen(
  file: Deno.FsFile,
  id: string,
  namespace: string,
): Promise<ImageRead> {
  const size = (await file.stat()).size;
  const prefix = new Uint8Array(PREFIX);
  if (!await readFull(file, prefix)) return { problem: "image truncated" };
  const view = new DataView(prefix.buffer);
  if (
    view.getUint32(0, true) !== MAGIC || view.getUint32(4, true) !== VERSION
  ) {
    return { problem: "not an image of this version" };
  }
  const jsonBytes = view.getUint32(16, true);
  const sectionBytes = view.getUint32(20, true);
  if (PREFIX + jsonBytes + sectionBytes > size) {
    return { problem: "image truncated" };
  }
  const json = new Uint8Array(jsonBytes);
  if (!await readFull(file, json)) return { problem: "image truncated" };
  const checksum = new Checksum();
  checksum.update(json);
  const value: unknown = JSON.parse(new TextDecoder().decode(json));
  const header = parseIndexHeader(value);
  if (
    typeof value !== "object" || value === null || !("id" in value) ||
    !("namespace" in value) || !("tag_ids" in value) ||
    !("postings" in value) || typeof value.tag_ids !== "number" ||
    typeof value.postings !== "number"
  ) return { problem: "image header unreadable" };
  // Stale (someone saved since) or another namespace's: checked before reading more.
  if (value.id !== id || value.namespace !== namespace) {
    return { problem: "image of another snapshot" };
  }
  const n = header.keys.length;
  const terms = header.terms.length;
  const { tag_ids: tagIds, postings } = value;
  const shapes: [number, number][] = [
    [n, 4],
    [n, 1],
    [n, 2],
    [n + 1, 4],
    [tagIds, 4],
    [terms + 1, 4],
    [postings, 4],
    [postings, 2],
    ...header.slabs.flatMap((s): [number, number][] => [
      [s.count, 4],
      [s.count, 4],
      [s.count, 4],
    ]),
  ];
  const expected = shapes.reduce(
    (sum, [count, width]) => sum + align8(count * width),
    0,
  );
  if (expected !== sectionBytes) {
    return { problem: "image sections disagree with its header" };
  }
  const buffer = new ArrayBuffer(sectionBytes);
  const sections = new Uint8Array(buffer);
  if (!await readFull(file, sections)) return { problem: "image truncated" };
  checksum.update(sections);
  let at = 0;
  const next = <T>(
    make: (buffer: ArrayBuffer, offset: number, length: number) => T,
    count: number,
    width: number,
  ): T => {
    const column = make(buffer, at, count);
    at += align8(count * width);
    return column;
  };
  const u32 = (count: number) =>
    next((b, o, l) => new Uint32Array(b, o, l), count, 4);
  const lengths = u32(n);
  const sensitive = next((b, o, l) => new Uint8Array(b, o, l), n, 1);
  const embedderOf = next((b, o, l) => new Uint16Array(b, o, l), n, 2);
  const tagOffsets = u32(n + 1);
  const tagIdColumn = u32(tagIds);
  const postingOffsets = u32(terms + 1);
  const postingSlots = u32(postings);
  const postingTfs = next((b, o, l) => new Uint16Array(b, o, l), postings, 2);
  const data = indexDataOf(header, {
    lengths,
    sensitive,
    embedderOf,
    tagOffsets,
    tagIds: tagIdColumn,
    postingOffsets,
    postingSlots,
    postingTfs,
  });
  let rowBytes = 0;
  for (const s of header.slabs) {
    const slots = u32(s.count);
    const invNorms = next((b, o, l) => new Float32Array(b, o, l), s.count, 4);
    const scales = next((b, o, l) => new Float32Array(b, o, l), s.count, 4);
    const { slab, rows } = VectorSlab.prepare(
      s.dim,
      s.count,
      slots,
      invNorms,
      scales,
    );
    rowBytes += rows.byteLength;
    if (PREFIX + jsonBytes + sectionBytes + rowBytes > size) {
      return { problem: "image truncated" };
    }
    const into = bytesOf(rows);
    if (!await readFull(file, into)) return { problem: "image truncated" };
    checksum.update(into);
    data.slabs.push({ ...s, rows, slots, invNorms, scales, slab });
  }
  if (PREFIX + jsonBytes + sectionBytes + rowBytes !== size) {
    return { problem: "image has trailing bytes" };
  }
  if (
    checksum.a >>> 0 !== view.getUint32(8, true) ||
    checksum.b >>> 0 !== view.getUint32(12, true)
  ) return { problem: "image checksum disagrees" };
  return { data };
}

/** The image file name of `namespace` (any text): two FNV-1a lanes of it, in hex. */
export function imageName(namespace: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < namespace.length; i++) {
    const c = namespace.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  return `index-${hex(a)}${hex(b)}.img`;
}
