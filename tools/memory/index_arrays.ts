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

/** Strings ↔ dense ids; ids of strings no longer used are kept (they cost one map entry). */
export class Dictionary {
  #ids = new Map<string, number>();
  readonly text: string[] = [];

  static of(text: string[]): Dictionary {
    const dict = new Dictionary();
    for (const t of text) dict.intern(t);
    if (dict.text.length !== text.length) {
      throw new Error("dictionary: duplicate strings");
    }
    return dict;
  }

  get size(): number {
    return this.text.length;
  }

  id(text: string): number | undefined {
    return this.#ids.get(text);
  }

  intern(text: string): number {
    let id = this.#ids.get(text);
    if (id === undefined) {
      id = this.text.length;
      this.#ids.set(text, id);
      this.text.push(text);
    }
    return id;
  }
}
