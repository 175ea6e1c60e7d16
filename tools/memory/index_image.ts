// A local file image of a namespace's index snapshot, for fast starts: the
// snapshot's arrays as they are in memory (fixed width, aligned), so a start
// reads them with a few file reads into the arrays themselves (the vector
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
// snapshot's id, namespace, embedders, tags, slab shapes and the counts of
// the sections; spaces pad it to 8 bytes), the sections (each 8-byte
// aligned), then each slab's rows. Keys and terms are sections too (UTF-8
// bytes, offsets, and their order by bytes: ByteStrings), so a start makes
// no JS string of them: at 100k entries, as JSON strings, they were the
// largest part of the load. The checksum covers everything after the prefix
// as little-endian 32-bit words; a start computes it from a third pass over
// the file, through one reused buffer, while the sections and the rows are
// read into place: the pages those land in are touched for the first time
// by the kernel, and the rows' never by this thread (a pass over them cost
// 60-80 ms at 100k entries: a page's first touch is the cost on this VM).

import type { IndexData } from "./search_index.ts";
import { VectorSlab } from "./search_vectors.ts";
import { ByteStrings } from "./index_arrays.ts";
import { isCount, isStrings, slabHeaders } from "./index_snapshot.ts";

const MAGIC = 0x31494d41; // "AMI1"
/** 2: keys and terms as byte sections; the checksum as one run of words, computed from the file. */
const VERSION = 2;
const PREFIX = 24;

/** What the image's JSON header says. */
interface ImageHeader {
  id: string;
  namespace: string;
  embedders: string[];
  tags: string[];
  slabs: { embedder: number; dim: number; count: number }[];
  keys: number;
  terms: number;
  key_bytes: number;
  term_bytes: number;
  tag_ids: number;
  postings: number;
}

type Column =
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | Float32Array;

/** What a start made of the image, or why it is not used. */
export type ImageRead<T> =
  | { value: T; problem?: undefined }
  | { value?: undefined; problem: string };

/** The columns of `data` in file order (rows apart), with its keys and terms as bytes. */
function columns(
  data: IndexData,
  keys: ByteStrings,
  terms: ByteStrings,
): Column[] {
  return [
    data.lengths,
    data.sensitive,
    data.embedderOf,
    data.tagOffsets,
    data.tagIds,
    data.postingOffsets,
    data.postingSlots,
    data.postingTfs,
    keys.offsets,
    keys.sorted,
    keys.bytes,
    terms.offsets,
    terms.sorted,
    terms.bytes,
    ...data.slabs.flatMap((s) => [s.slots, s.invNorms, s.scales]),
  ];
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

/**
 * Adds `count` words to the sums in `state` (a, b). Apart from the async
 * sumsOfFile: V8 optimises no loop inside an async function while it runs,
 * and this one ran 3-5× slower there on a start's one pass.
 */
function sum(words: Int32Array, count: number, state: Int32Array): void {
  let a = state[0];
  let b = state[1];
  for (let i = 0; i < count; i++) {
    a = (a + words[i]) | 0;
    b = (b + a) | 0;
  }
  state[0] = a;
  state[1] = b;
}

/** The largest of `count` words from `at` (as unsigned), or `max`. */
function largest(
  words: Uint32Array,
  at: number,
  count: number,
  max: number,
): number {
  for (let i = at; i < at + count; i++) if (words[i] > max) max = words[i];
  return max;
}

/**
 * The checksum of the file at `path` from byte `from` to its end:
 * Fletcher-style sums over little-endian 32-bit words (a tail zero-padded),
 * so a word changed, lost or moved changes them; against damage and torn
 * writes, not tampering. Read in 4 MiB pieces into one buffer (no fresh
 * memory per MiB: on this kind of VM a page touched for the first time costs
 * ~14 µs, and again at the first touch after the kernel wrote it). With
 * `words` (file offsets, 4-aligned from `from`), also the largest unsigned
 * word in that range: the posting slots' check, so that the start's own
 * thread need not touch their pages (9 MB at 100k entries).
 */
export async function sumsOfFile(
  path: string,
  from: number,
  words?: { start: number; end: number },
): Promise<Sums> {
  const file = await Deno.open(path);
  try {
    await file.seek(from, Deno.SeekMode.Start);
    const chunk = new Uint8Array(SUM_CHUNK);
    const signed = new Int32Array(chunk.buffer);
    const unsigned = new Uint32Array(chunk.buffer);
    const state = new Int32Array(2);
    let bytes = 0;
    let max = 0;
    for (;;) {
      let got = 0;
      while (got < chunk.length) {
        const n = await file.read(chunk.subarray(got));
        if (n === null) break;
        got += n;
      }
      if (got & 3) chunk.fill(0, got, (got + 3) & ~3);
      sum(signed, (got + 3) >>> 2, state);
      if (words) {
        // This chunk's part of the range, in words.
        const start = Math.max(words.start - from - bytes, 0);
        const end = Math.min(words.end - from - bytes, got);
        if (end > start) {
          max = largest(unsigned, start >> 2, (end - start) >> 2, max);
        }
      }
      bytes += got;
      if (got < chunk.length) break;
    }
    return { a: state[0] >>> 0, b: state[1] >>> 0, bytes, max };
  } finally {
    file.close();
  }
}

/** The bytes sumsOfFile reads at once. */
export const SUM_CHUNK = 4 << 20;

interface Sums {
  a: number;
  b: number;
  /** Bytes summed. */
  bytes: number;
  /** The largest word of the range asked for (0 without one). */
  max: number;
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
  const keys = ByteStrings.of(data.keys);
  const terms = ByteStrings.of(data.terms);
  const header: ImageHeader = {
    id,
    namespace,
    embedders: data.embedders,
    tags: data.tags,
    slabs: data.slabs.map(({ embedder, dim, count }) => ({
      embedder,
      dim,
      count,
    })),
    keys: keys.length,
    terms: terms.length,
    key_bytes: keys.bytes.length,
    term_bytes: terms.bytes.length,
    tag_ids: data.tagIds.length,
    postings: data.postingSlots.length,
  };
  const text = new TextEncoder().encode(JSON.stringify(header));
  // Padded with spaces: the sections, and the checksum's words, start 8-byte aligned.
  const json = new Uint8Array(align8(text.length)).fill(0x20);
  json.set(text);
  const parts = columns(data, keys, terms);
  const sectionBytes = parts.reduce((n, c) => n + align8(c.byteLength), 0);
  const sections: Uint8Array[] = [];
  for (const column of parts) {
    const bytes = bytesOf(column);
    sections.push(
      bytes,
      new Uint8Array(align8(bytes.byteLength) - bytes.byteLength),
    );
  }
  const rows = data.slabs.map((s) => bytesOf(s.rows));
  const prefix = new Uint8Array(PREFIX);
  const view = new DataView(prefix.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, VERSION, true);
  // The sums (8, 12) are written last, from the file as written.
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
    const sums = await sumsOfFile(temp, PREFIX);
    view.setUint32(8, sums.a, true);
    view.setUint32(12, sums.b, true);
    await file.seek(0, Deno.SeekMode.Start);
    await writeAll(file, prefix);
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
 * What `build` makes of the image at `path`, when it is snapshot `id` of
 * `namespace`, whole and undamaged; else why not (a missing file too).
 * `build` (SearchIndex.fromData and the checks that the parts agree) runs
 * while the vector rows are still being read into their slabs, and must
 * not read them; its result is used only once they are in and the
 * checksum agrees.
 */
export async function readIndexImage<T>(
  path: string,
  id: string,
  namespace: string,
  build: (data: IndexData) => T,
): Promise<ImageRead<T>> {
  try {
    const opened = await openImage(path, { id, namespace });
    if ("problem" in opened) return opened;
    return await finish(opened, build);
  } catch (error) {
    return { problem: `image damaged: ${String(error)}` };
  }
}

/** An image whose reads are under way: its sections, its rows into their slabs, and the checksum's pass. */
interface Opening {
  header: ImageHeader;
  data: IndexData;
  size: number;
  prefix: DataView;
  sectionsRead: Promise<boolean>;
  rowsRead: Promise<boolean>;
  sums: Promise<Sums>;
}

type Opened = Opening | { problem: string };

/** The header, checked; null when it is not one. */
function parseHeader(value: unknown): ImageHeader | null {
  if (
    typeof value !== "object" || value === null ||
    !("id" in value) || typeof value.id !== "string" ||
    !("namespace" in value) || typeof value.namespace !== "string" ||
    !("embedders" in value) || !isStrings(value.embedders) ||
    !("tags" in value) || !isStrings(value.tags) ||
    !("slabs" in value) || !Array.isArray(value.slabs) ||
    !("keys" in value) || !isCount(value.keys) ||
    !("terms" in value) || !isCount(value.terms) ||
    !("key_bytes" in value) || !isCount(value.key_bytes) ||
    !("term_bytes" in value) || !isCount(value.term_bytes) ||
    !("tag_ids" in value) || !isCount(value.tag_ids) ||
    !("postings" in value) || !isCount(value.postings)
  ) return null;
  const slabs = slabHeaders(value.slabs);
  if (!slabs) return null;
  return {
    id: value.id,
    namespace: value.namespace,
    embedders: value.embedders,
    tags: value.tags,
    slabs,
    keys: value.keys,
    terms: value.terms,
    key_bytes: value.key_bytes,
    term_bytes: value.term_bytes,
    tag_ids: value.tag_ids,
    postings: value.postings,
  };
}

/**
 * Opens the image at `path`, checks its prefix, header (that it is of
 * snapshot `expect`: a stale one is not read further) and size, and
 * starts its reads, each on a thread of Deno's: the sections (one handle),
 * the rows into their slabs (a second) and the checksum's pass (a third,
 * its own). The first two close when their reads are done. Were the file
 * replaced between the opens, the sums would not be this prefix's. (A
 * worker for the checksum blocked this thread 100-300 ms to start, in the
 * server's process.)
 */
async function openImage(
  path: string,
  expect: { id: string; namespace: string },
): Promise<Opened> {
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
  let reading = false;
  try {
    const size = (await file.stat()).size;
    const prefixBytes = new Uint8Array(PREFIX);
    if (!await readFull(file, prefixBytes)) {
      return { problem: "image truncated" };
    }
    const prefix = new DataView(prefixBytes.buffer);
    if (
      prefix.getUint32(0, true) !== MAGIC ||
      prefix.getUint32(4, true) !== VERSION
    ) {
      return { problem: "not an image of this version" };
    }
    const jsonBytes = prefix.getUint32(16, true);
    const sectionBytes = prefix.getUint32(20, true);
    if (PREFIX + jsonBytes + sectionBytes > size) {
      return { problem: "image truncated" };
    }
    const json = new Uint8Array(jsonBytes);
    if (!await readFull(file, json)) return { problem: "image truncated" };
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(json));
    } catch {
      return { problem: "image header unreadable" };
    }
    const header = parseHeader(value);
    if (!header) return { problem: "image header unreadable" };
    // Stale (someone saved since) or another namespace's: known before reading more.
    if (
      header.id !== expect.id || header.namespace !== expect.namespace
    ) return { problem: "image of another snapshot" };
    if (sectionsSize(header) !== sectionBytes) {
      return { problem: "image sections disagree with its header" };
    }
    const buffer = new ArrayBuffer(sectionBytes);
    const data = viewsOf(header, buffer);
    const rowBytes = data.slabs.reduce((n, s) => n + s.rows.byteLength, 0);
    if (PREFIX + jsonBytes + sectionBytes + rowBytes > size) {
      return { problem: "image truncated" };
    }
    if (PREFIX + jsonBytes + sectionBytes + rowBytes !== size) {
      return { problem: "image has trailing bytes" };
    }
    const rowsFile = await Deno.open(path);
    const rowsRead = (async () => {
      await rowsFile.seek(
        PREFIX + jsonBytes + sectionBytes,
        Deno.SeekMode.Start,
      );
      for (const s of data.slabs) {
        if (!await readFull(rowsFile, bytesOf(s.rows))) return false;
      }
      return true;
    })();
    const sectionsRead = readFull(file, new Uint8Array(buffer));
    const slotsAt = PREFIX + jsonBytes + data.postingSlots.byteOffset;
    const sums = sumsOfFile(path, PREFIX, {
      start: slotsAt,
      end: slotsAt + data.postingSlots.byteLength,
    });
    sums.catch(() => {});
    reading = true;
    const opened = file;
    // No read may still be going when its file closes; their failures are their awaiters'.
    Promise.allSettled([sectionsRead, rowsRead]).then(() => {
      opened.close();
      rowsFile.close();
    });
    return { header, data, size, prefix, sectionsRead, rowsRead, sums };
  } finally {
    if (!reading) file.close();
  }
}

/** The sections' bytes the header's counts make. */
function sectionsSize(header: ImageHeader): number {
  const { keys: n, terms, tag_ids: tagIds, postings } = header;
  const shapes: [number, number][] = [
    [n, 4],
    [n, 1],
    [n, 2],
    [n + 1, 4],
    [tagIds, 4],
    [terms + 1, 4],
    [postings, 4],
    [postings, 2],
    [n + 1, 4],
    [n, 4],
    [header.key_bytes, 1],
    [terms + 1, 4],
    [terms, 4],
    [header.term_bytes, 1],
    ...header.slabs.flatMap((s): [number, number][] => [
      [s.count, 4],
      [s.count, 4],
      [s.count, 4],
    ]),
  ];
  return shapes.reduce((sum, [count, width]) => sum + align8(count * width), 0);
}

/** `build` over an opened image, once its reads are in and the checksum agrees. */
async function finish<T>(
  opened: Opening,
  build: (data: IndexData) => T,
): Promise<{ value: T; problem?: undefined } | { problem: string }> {
  try {
    return await check(opened, build);
  } finally {
    // Nothing of it still reading once it is answered (or dropped).
    await Promise.allSettled([
      opened.sectionsRead,
      opened.rowsRead,
      opened.sums,
    ]);
  }
}

async function check<T>(
  opened: Opening,
  build: (data: IndexData) => T,
): Promise<{ value: T; problem?: undefined } | { problem: string }> {
  const { data, size, prefix } = opened;
  if (!await opened.sectionsRead) return { problem: "image truncated" };
  // While the rows are read: `build` does not touch them.
  let built: { value: T } | { error: unknown };
  try {
    built = { value: build(data) };
  } catch (error) {
    built = { error };
  }
  if (!await opened.rowsRead) return { problem: "image truncated" };
  const checksum = await opened.sums;
  if (
    checksum.bytes !== size - PREFIX ||
    checksum.a !== prefix.getUint32(8, true) ||
    checksum.b !== prefix.getUint32(12, true)
  ) return { problem: "image checksum disagrees" };
  // Postings.fromData left this to the checksum's pass (slotsChecked).
  if (data.postingSlots.length > 0 && checksum.max >= data.keys.length) {
    return {
      problem: "image disagrees with itself: posting slot out of range",
    };
  }
  if ("error" in built) {
    const message = built.error instanceof Error
      ? built.error.message
      : String(built.error);
    return { problem: `image disagrees with its head: ${message}` };
  }
  return { value: built.value };
}

/** The index data as views of the sections' `buffer` (not read yet), each slab prepared for its rows. */
function viewsOf(header: ImageHeader, buffer: ArrayBuffer): IndexData {
  const { keys: n, terms, tag_ids: tagIds, postings } = header;
  let at = 0;
  const next = <C>(
    make: (buffer: ArrayBuffer, offset: number, length: number) => C,
    count: number,
    width: number,
  ): C => {
    const column = make(buffer, at, count);
    at += align8(count * width);
    return column;
  };
  const u32 = (count: number) =>
    next((b, o, l) => new Uint32Array(b, o, l), count, 4);
  const u8 = (count: number) =>
    next((b, o, l) => new Uint8Array(b, o, l), count, 1);
  const u16 = (count: number) =>
    next((b, o, l) => new Uint16Array(b, o, l), count, 2);
  const f32 = (count: number) =>
    next((b, o, l) => new Float32Array(b, o, l), count, 4);
  const lengths = u32(n);
  const sensitive = u8(n);
  const embedderOf = u16(n);
  const tagOffsets = u32(n + 1);
  const tagIdColumn = u32(tagIds);
  const postingOffsets = u32(terms + 1);
  const postingSlots = u32(postings);
  const postingTfs = u16(postings);
  const keyOffsets = u32(n + 1);
  const keySorted = u32(n);
  const keyBytes = u8(header.key_bytes);
  const termOffsets = u32(terms + 1);
  const termSorted = u32(terms);
  const termBytes = u8(header.term_bytes);
  const data: IndexData = {
    keys: new ByteStrings(keyBytes, keyOffsets, keySorted),
    embedders: header.embedders,
    tags: header.tags,
    terms: new ByteStrings(termBytes, termOffsets, termSorted),
    lengths,
    sensitive,
    embedderOf,
    tagOffsets,
    tagIds: tagIdColumn,
    postingOffsets,
    postingSlots,
    postingTfs,
    slotsChecked: true,
    slabs: [],
  };
  for (const s of header.slabs) {
    const slots = u32(s.count);
    const invNorms = f32(s.count);
    const scales = f32(s.count);
    const { slab, rows } = VectorSlab.prepare(
      s.dim,
      s.count,
      slots,
      invNorms,
      scales,
    );
    data.slabs.push({ ...s, rows, slots, invNorms, scales, slab });
  }
  return data;
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
