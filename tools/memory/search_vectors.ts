// Vector storage for SearchIndex: one embedder's vectors as int8 rows and a
// scale per row (the form they are stored in, kv_records.ts) in a slab of wasm
// memory, scanned by a tiny WebAssembly SIMD kernel (or a JS loop).

import { grown } from "./index_arrays.ts";

type DotsFn = (
  rows: number,
  query: number,
  count: number,
  strideBytes: number,
  out: number,
) => void;

/**
 * The kernel, assembled with wabt 1.0.37 (npm `wabt`, wat2wasm) from this WAT:
 *
 *   (module (import "e" "m" (memory 1))
 *    (func (export "dots") (param $rows i32) (param $query i32) (param $count i32)
 *                          (param $stride i32) (param $out i32)   ;; byte offsets/sizes
 *     (local $i i32) (local $acc v128) (local $v v128) (local $q i32)
 *     (block $done (loop $row
 *       (br_if $done (i32.eqz (local.get $count)))
 *       (local.set $acc (v128.const i64x2 0 0)) (local.set $i (i32.const 0))
 *       (local.set $q (local.get $query))
 *       (loop $inner                                   ;; 16 int8 × 16 int16 per step
 *         (local.set $v (v128.load (local.get $rows)))
 *         (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s
 *           (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $q)))))
 *         (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s
 *           (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $q)))))
 *         (local.set $rows (i32.add (local.get $rows) (i32.const 16)))
 *         (local.set $q (i32.add (local.get $q) (i32.const 32)))
 *         (br_if $inner (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 16)))
 *           (local.get $stride))))
 *       (i32.store (local.get $out) (lane0 + lane1 + lane2 + lane3 of $acc))
 *       (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *       (local.set $count (i32.sub (local.get $count) (i32.const 1)))
 *       (br $row))))
 *
 * out[r] = Σ rows[r][i]·query[i] (int8 rows, int16 query, int32 sums) for
 * r < count; stride (bytes of a row) % 16 == 0.
 */
const DOTS_WASM =
  "0061736d0100000001090160057f7f7f7f7f000208010165016d020001030201000708" +
  "0104646f747300000aad0101aa0103017f027b017f024003402002450d01fd0c000000" +
  "000000000000000000000000002106410021052001210803402000fd00040021072006" +
  "2007fd87012008fd000400fdba01fdae01210620062007fd88012008fd000410fdba01" +
  "fdae012106200041106a2100200841206a2108200541106a22052003490d000b200420" +
  "06fd1b002006fd1b016a2006fd1b022006fd1b036a6a360200200441046a2104200241" +
  "016b21020c000b0b0b";

let dotsModule: WebAssembly.Module | null | undefined;

/** The SIMD kernel over `memory`, or a JS loop where wasm SIMD is unavailable. */
function dotsKernel(memory: WebAssembly.Memory): DotsFn {
  if (dotsModule === undefined) {
    try {
      dotsModule = new WebAssembly.Module(
        Uint8Array.from(DOTS_WASM.match(/../g) ?? [], (h) => parseInt(h, 16)),
      );
    } catch {
      dotsModule = null;
    }
  }
  const dots = dotsModule &&
    new WebAssembly.Instance(dotsModule, { e: { m: memory } }).exports.dots;
  if (typeof dots === "function") {
    return (rows, query, count, stride, out) =>
      dots(rows, query, count, stride, out);
  }
  return (rows, query, count, stride, out) => {
    const i8 = new Int8Array(memory.buffer);
    const q = new Int16Array(memory.buffer, query, stride);
    const o = new Int32Array(memory.buffer, out, count);
    for (let r = 0, base = rows; r < count; r++, base += stride) {
      let s = 0;
      for (let i = 0; i < stride; i++) s += i8[base + i] * q[i];
      o[r] = s;
    }
  };
}

/** A vector as the store keeps it: int8 components (max ±127) and 1/‖int8‖. */
export interface Int8Row {
  i8: Int8Array;
  invNorm: number;
  /** Component = i8 × scale (a Float32 value). */
  scale: number;
}

/** Symmetric int8 quantisation (the largest component maps to ±127), Float32 scale; null for zero or non-finite vectors. */
export function quantiseRow(vector: Float32Array): Int8Row | null {
  let max = 0;
  for (let i = 0; i < vector.length; i++) {
    max = Math.max(max, Math.abs(vector[i]));
  }
  if (!(max > 0) || !Number.isFinite(max)) return null;
  const scale = Math.fround(max / 127);
  if (!(scale > 0)) return null;
  const i8 = new Int8Array(vector.length);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) {
    i8[i] = Math.max(-127, Math.min(127, Math.round(vector[i] / scale)));
    sum += i8[i] * i8[i];
  }
  return sum > 0 ? { i8, invNorm: 1 / Math.sqrt(sum), scale } : null;
}

/** The parts of a slab a snapshot holds (rows in row order). */
export interface SlabData {
  dim: number;
  count: number;
  /** count × stride bytes. */
  rows: Int8Array;
  slots: Uint32Array;
  invNorms: Float32Array;
  /** Each row's quantisation scale (component = int8 × scale). */
  scales: Float32Array;
  /** A slab `rows` already lives in (see VectorSlab.prepare): taken as it is. */
  slab?: VectorSlab;
}

/** One embedder's int8 rows in wasm memory; removal moves the last row in. */
export class VectorSlab {
  /** Bytes per row: dim rounded up to the kernel's 16-byte step. */
  readonly stride: number;
  #count = 0;
  /** row -> slot */
  #slots: Uint32Array = new Uint32Array(16);
  #invNorms: Float32Array = new Float32Array(16);
  #scales: Float32Array = new Float32Array(16);
  #memory = new WebAssembly.Memory({ initial: 1 });
  #dots = dotsKernel(this.#memory);

  constructor(readonly dim: number) {
    this.stride = Math.ceil(dim / 16) * 16;
  }

  static fromData(data: SlabData): VectorSlab {
    const slab = new VectorSlab(data.dim);
    if (
      data.rows.length !== data.count * slab.stride ||
      data.slots.length !== data.count ||
      data.invNorms.length !== data.count || data.scales.length !== data.count
    ) {
      throw new Error("vector slab: section sizes disagree");
    }
    slab.#reserve(data.rows.length);
    new Int8Array(slab.#memory.buffer).set(data.rows);
    slab.#slots = data.slots.slice();
    slab.#invNorms = data.invNorms.slice();
    slab.#scales = data.scales.slice();
    slab.#count = data.count;
    return slab;
  }

  /**
   * A slab of `count` rows whose bytes the caller writes into `rows` (a view
   * of its wasm memory), so a snapshot's rows are read into place, not copied.
   */
  static prepare(
    dim: number,
    count: number,
    slots: Uint32Array,
    invNorms: Float32Array,
    scales: Float32Array,
  ): { slab: VectorSlab; rows: Int8Array } {
    const slab = new VectorSlab(dim);
    if (
      slots.length !== count || invNorms.length !== count ||
      scales.length !== count
    ) {
      throw new Error("vector slab: section sizes disagree");
    }
    // Room for the rows, a query and one score per row: no growth before the next add.
    slab.#reserve(count * slab.stride + slab.stride * 2 + count * 4 + 16);
    slab.#slots = slots;
    slab.#invNorms = invNorms;
    slab.#scales = scales;
    slab.#count = count;
    const rows = new Int8Array(slab.#memory.buffer, 0, count * slab.stride);
    return { slab, rows };
  }

  get count(): number {
    return this.#count;
  }

  slotOf(row: number): number {
    return this.#slots[row];
  }

  /** The vector a row holds: its int8 components × its scale. */
  vector(row: number): Float32Array {
    const i8 = new Int8Array(this.#memory.buffer, row * this.stride, this.dim);
    const scale = this.#scales[row];
    const vector = new Float32Array(this.dim);
    for (let i = 0; i < this.dim; i++) vector[i] = i8[i] * scale;
    return vector;
  }

  /** A copy of the live rows, for a snapshot; `slotMap` renumbers slots. */
  data(slotMap: Int32Array): SlabData {
    const count = this.#count;
    const slots = new Uint32Array(count);
    for (let r = 0; r < count; r++) slots[r] = slotMap[this.#slots[r]];
    return {
      dim: this.dim,
      count,
      rows: new Int8Array(this.#memory.buffer, 0, count * this.stride).slice(),
      slots,
      invNorms: this.#invNorms.slice(0, count),
      scales: this.#scales.slice(0, count),
    };
  }

  /** Appends `row` for `slot`; returns its row number. */
  add(row: Int8Row, slot: number): number {
    const at = this.#count;
    this.#reserve((at + 1) * this.stride);
    const bytes = new Int8Array(
      this.#memory.buffer,
      at * this.stride,
      this.stride,
    );
    bytes.set(row.i8);
    bytes.fill(0, row.i8.length);
    this.#slots = grown(this.#slots, at + 1, (n) => new Uint32Array(n));
    this.#invNorms = grown(this.#invNorms, at + 1, (n) => new Float32Array(n));
    this.#scales = grown(this.#scales, at + 1, (n) => new Float32Array(n));
    this.#slots[at] = slot;
    this.#invNorms[at] = row.invNorm;
    this.#scales[at] = row.scale;
    this.#count++;
    return at;
  }

  /** Returns the slot whose row moved into `row`, if any. */
  remove(row: number): number | undefined {
    const last = --this.#count;
    if (row === last) return undefined;
    new Int8Array(this.#memory.buffer).copyWithin(
      row * this.stride,
      last * this.stride,
      (last + 1) * this.stride,
    );
    this.#slots[row] = this.#slots[last];
    this.#invNorms[row] = this.#invNorms[last];
    this.#scales[row] = this.#scales[last];
    return this.#slots[row];
  }

  /** Cosine similarity of every row with `query` (a fresh array, one per row). */
  scores(query: Float32Array): Float32Array {
    const count = this.#count;
    const out = new Float32Array(count);
    let max = 0;
    for (let i = 0; i < query.length; i++) {
      max = Math.max(max, Math.abs(query[i]));
    }
    if (count === 0 || !(max > 0) || !Number.isFinite(max)) return out;
    // int8 × int16 sums must stay within int32 over the whole row.
    const top = Math.min(32767, Math.floor(0x7fffffff / (this.stride * 127)));
    const queryAt = count * this.stride;
    const outAt = queryAt + this.stride * 2;
    this.#reserve(outAt + count * 4);
    const q = new Int16Array(this.#memory.buffer, queryAt, this.stride);
    let sum = 0;
    for (let i = 0; i < query.length; i++) {
      q[i] = Math.round(query[i] / max * top);
      sum += q[i] * q[i];
    }
    q.fill(0, query.length);
    if (sum === 0) return out;
    this.#dots(0, queryAt, count, this.stride, outAt);
    const dots = new Int32Array(this.#memory.buffer, outAt, count);
    const inv = 1 / Math.sqrt(sum);
    for (let r = 0; r < count; r++) out[r] = dots[r] * this.#invNorms[r] * inv;
    return out;
  }

  #reserve(bytes: number): void {
    // Query and output follow the rows: keep room for them (queryAt/outAt are 16-aligned).
    const have = this.#memory.buffer.byteLength;
    if (bytes <= have) return;
    const pages = Math.ceil((bytes - have) / 65536);
    // A slab that starts empty grows by a quarter at least; a prepared one exactly.
    const slack = have > 65536 ? Math.ceil(have / 65536 / 4) : 0;
    this.#memory.grow(Math.max(pages, slack));
  }
}
