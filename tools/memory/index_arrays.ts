// Growable typed arrays for SearchIndex: per-slot columns and an arena of
// per-slot id lists (a document's terms, an entry's tags), so the index holds
// no JS object per entry.

export function grown<
  T extends
    | Uint32Array
    | Uint16Array
    | Uint8Array
    | Int32Array
    | Float32Array,
>(
  array: T,
  min: number,
  make: (length: number) => T,
): T {
  if (array.length >= min) return array;
  const bigger = make(Math.max(min, array.length * 2, 16));
  bigger.set(array);
  return bigger;
}

/** Lists of uint32 ids per slot in one array; replaced lists leave garbage, compacted on growth. */
export class Arena {
  #data: Uint32Array = new Uint32Array(64);
  #used = 0;
  #garbage = 0;
  #start = new Uint32Array(16);
  #count = new Uint32Array(16);

  /** From offsets (slots + 1 entries) into `ids`, as a snapshot holds them. */
  static fromOffsets(offsets: Uint32Array, ids: Uint32Array): Arena {
    const arena = new Arena();
    const slots = offsets.length - 1;
    arena.#data = ids;
    arena.#used = ids.length;
    arena.#start = new Uint32Array(Math.max(slots, 16));
    arena.#count = new Uint32Array(Math.max(slots, 16));
    for (let s = 0; s < slots; s++) {
      if (offsets[s + 1] < offsets[s] || offsets[s + 1] > ids.length) {
        throw new Error("arena: offsets out of order");
      }
      arena.#start[s] = offsets[s];
      arena.#count[s] = offsets[s + 1] - offsets[s];
    }
    return arena;
  }

  /** Bytes held, for the memory figures. */
  get bytes(): number {
    return this.#data.byteLength + this.#start.byteLength * 2;
  }

  get(slot: number): Uint32Array {
    if (slot >= this.#start.length) return new Uint32Array(0);
    const start = this.#start[slot];
    return this.#data.subarray(start, start + this.#count[slot]);
  }

  set(slot: number, ids: ArrayLike<number>): void {
    this.clear(slot);
    this.#start = grown(this.#start, slot + 1, (n) => new Uint32Array(n));
    this.#count = grown(this.#count, slot + 1, (n) => new Uint32Array(n));
    if (ids.length === 0) return;
    if (this.#used + ids.length > this.#data.length) this.#make(ids.length);
    this.#data.set(ids, this.#used);
    this.#start[slot] = this.#used;
    this.#count[slot] = ids.length;
    this.#used += ids.length;
  }

  clear(slot: number): void {
    if (slot >= this.#count.length) return;
    this.#garbage += this.#count[slot];
    this.#count[slot] = 0;
  }

  /** Room for `more` ids: compacts when half is garbage, else doubles. */
  #make(more: number): void {
    const live = this.#used - this.#garbage;
    const size = Math.max(64, (live + more) * 2);
    const data = new Uint32Array(size);
    let used = 0;
    for (let s = 0; s < this.#count.length; s++) {
      const n = this.#count[s];
      if (n === 0) continue;
      const start = this.#start[s];
      data.set(this.#data.subarray(start, start + n), used);
      this.#start[s] = used;
      used += n;
    }
    this.#data = data;
    this.#used = used;
    this.#garbage = 0;
  }
}

/** Strings by index, and the index of a string: a snapshot's keys and terms. */
export interface StringList {
  readonly length: number;
  /** The string at `i` (< length). */
  at(i: number): string;
  /** The index of `text`, or -1. */
  indexOf(text: string): number;
  /** Whether no string is there twice (ByteStrings: and its order is right). */
  unique(): boolean;
}

/** A StringList of JS strings; the map that finds them is built on first use. */
export class ArrayStrings implements StringList {
  readonly strings: readonly string[];
  #ids: Map<string, number> | null = null;

  constructor(strings: readonly string[]) {
    this.strings = strings;
  }

  get length(): number {
    return this.strings.length;
  }

  at(i: number): string {
    return this.strings[i];
  }

  indexOf(text: string): number {
    return this.#map().get(text) ?? -1;
  }

  unique(): boolean {
    return this.#map().size === this.strings.length;
  }

  #map(): Map<string, number> {
    if (this.#ids) return this.#ids;
    const ids = new Map<string, number>();
    // The first of a repeated string: as Dictionary.intern would number it.
    this.strings.forEach((s, i) => {
      if (!ids.has(s)) ids.set(s, i);
    });
    return this.#ids = ids;
  }
}

const EMPTY: StringList = new ArrayStrings([]);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** compareBytes of strings `a` and `b` of one section (`bytes`, `offsets`). */
function compareStrings(
  bytes: Uint8Array,
  offsets: Uint32Array,
  a: number,
  b: number,
): number {
  return compareBytes(
    bytes,
    offsets[a],
    offsets[a + 1],
    bytes,
    offsets[b],
    offsets[b + 1],
  );
}

/** -1, 0 or 1 as UTF-8 bytes a[from, to) sort against b. */
function compareBytes(
  a: Uint8Array,
  from: number,
  to: number,
  b: Uint8Array,
  bFrom: number,
  bTo: number,
): number {
  const n = Math.min(to - from, bTo - bFrom);
  for (let i = 0; i < n; i++) {
    const d = a[from + i] - b[bFrom + i];
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  const d = (to - from) - (bTo - bFrom);
  return d < 0 ? -1 : d > 0 ? 1 : 0;
}

/**
 * Strings as UTF-8 in one byte array (string i is bytes[offsets[i],
 * offsets[i + 1])) with their order by bytes (`sorted`, indexes): a string
 * is decoded when asked for and found by binary search, so a start makes no
 * JS string of them (at 100k entries ~200k strings, the largest part of an
 * index image's load when they were JSON).
 */
export class ByteStrings implements StringList {
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  readonly sorted: Uint32Array;
  #scratch = new Uint8Array(256);
  /** Strings decoded so far: a search's ties compare the same keys again and again. */
  #decoded: (string | undefined)[] | null = null;

  constructor(bytes: Uint8Array, offsets: Uint32Array, sorted: Uint32Array) {
    // Their contents are checked by unique(): they may not be read in yet.
    if (offsets.length !== sorted.length + 1) {
      throw new Error("strings: sections disagree");
    }
    this.bytes = bytes;
    this.offsets = offsets;
    this.sorted = sorted;
  }

  /** `list` as UTF-8 bytes, sorted (for writing: the whole list is encoded). */
  static of(list: StringList): ByteStrings {
    if (list instanceof ByteStrings) return list;
    const n = list.length;
    const parts: Uint8Array[] = [];
    const offsets = new Uint32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const part = encoder.encode(list.at(i));
      parts.push(part);
      offsets[i + 1] = offsets[i] + part.length;
    }
    const bytes = new Uint8Array(offsets[n]);
    parts.forEach((part, i) => bytes.set(part, offsets[i]));
    const sorted = new Uint32Array(n);
    for (let i = 0; i < n; i++) sorted[i] = i;
    sorted.sort((a, b) => compareStrings(bytes, offsets, a, b) || a - b);
    return new ByteStrings(bytes, offsets, sorted);
  }

  get length(): number {
    return this.sorted.length;
  }

  at(i: number): string {
    this.#decoded ??= new Array<string | undefined>(this.sorted.length);
    return this.#decoded[i] ??= decoder.decode(
      this.bytes.subarray(this.offsets[i], this.offsets[i + 1]),
    );
  }

  indexOf(text: string): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.#scratch.length < text.length * 3) {
      this.#scratch = new Uint8Array(text.length * 3);
    }
    const { written } = encoder.encodeInto(text, this.#scratch);
    const { bytes, offsets, sorted } = this;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = sorted[mid];
      const c = compareBytes(
        bytes,
        offsets[i],
        offsets[i + 1],
        this.#scratch,
        0,
        written,
      );
      if (c === 0) return i;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** Offsets in order and in range, and `sorted` strictly ascending (so each index once). */
  unique(): boolean {
    const { bytes, offsets, sorted } = this;
    const n = sorted.length;
    for (let i = 0; i < n; i++) {
      if (offsets[i + 1] < offsets[i] || sorted[i] >= n) return false;
    }
    if (offsets[0] !== 0 || offsets[n] !== bytes.length) return false;
    for (let k = 1; k < n; k++) {
      if (compareStrings(bytes, offsets, sorted[k - 1], sorted[k]) >= 0) {
        return false;
      }
    }
    return true;
  }
}

/** Every string of `list`, in order. */
export function stringsOf(list: StringList): string[] {
  if (list instanceof ArrayStrings) return [...list.strings];
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) out.push(list.at(i));
  return out;
}

/**
 * Strings ↔ dense ids: those of a loaded snapshot (`base`, ids 0..) and
 * those added since, after them; ids of strings no longer used are kept
 * (they cost one map entry).
 */
export class Dictionary {
  #base: StringList = EMPTY;
  #ids = new Map<string, number>();
  #added: string[] = [];

  /** Over `base` (its strings keep their indexes as ids); throws on a repeated string. */
  static of(base: StringList): Dictionary {
    const dict = new Dictionary();
    dict.#base = base;
    if (!dict.#base.unique()) {
      throw new Error("dictionary: duplicate strings");
    }
    return dict;
  }

  get size(): number {
    return this.#base.length + this.#added.length;
  }

  id(text: string): number | undefined {
    const added = this.#ids.get(text);
    if (added !== undefined) return added;
    const id = this.#base.indexOf(text);
    return id < 0 ? undefined : id;
  }

  intern(text: string): number {
    let id = this.id(text);
    if (id === undefined) {
      id = this.size;
      this.#ids.set(text, id);
      this.#added.push(text);
    }
    return id;
  }

  /** The string of `id` (< size). */
  text(id: number): string {
    const base = this.#base.length;
    return id < base ? this.#base.at(id) : this.#added[id - base];
  }

  /** Every string, by id. */
  texts(): string[] {
    return [...stringsOf(this.#base), ...this.#added];
  }
}
