// Screenshot pixels → image bytes: an area-average downscale to the long
// side the config allows, then JPEG (libturbojpeg through FFI when present,
// else jpeg-js) or PNG (fast-png). No codec is written here.

import {
  openTurboJpeg,
  TJ,
  type TurboJpegLibrary,
} from "../../ffi/turbojpeg.ts";
import { lazy } from "../../platform/lazy.ts";
import type { Frame } from "./backends/port.ts";

/** Packed BGRX pixels, 4 bytes each, rows without padding. */
export interface Pixels {
  width: number;
  height: number;
  data: Uint8Array<ArrayBuffer>;
}

/** The image size for a `width`×`height` capture whose long side may be at most `maxLongSide`. */
export function scaledSize(
  width: number,
  height: number,
  maxLongSide: number,
): { width: number; height: number } {
  const long = Math.max(width, height);
  if (long <= maxLongSide) return { width, height };
  const factor = maxLongSide / long;
  return {
    width: Math.max(1, Math.round(width * factor)),
    height: Math.max(1, Math.round(height * factor)),
  };
}

/** Copies (and when needed shrinks, averaging each source block) a frame into packed pixels. */
export function downscale(frame: Frame, maxLongSide: number): Pixels {
  const { width: sw, height: sh, stride, data } = frame;
  const { width: dw, height: dh } = scaledSize(sw, sh, maxLongSide);
  const out = new Uint8Array(dw * dh * 4);
  if (dw === sw && dh === sh) {
    for (let y = 0; y < sh; y++) {
      out.set(data.subarray(y * stride, y * stride + sw * 4), y * sw * 4);
    }
    return { width: dw, height: dh, data: out };
  }
  const x0 = new Int32Array(dw);
  const x1 = new Int32Array(dw);
  for (let x = 0; x < dw; x++) {
    x0[x] = Math.floor((x * sw) / dw);
    x1[x] = Math.max(x0[x] + 1, Math.floor(((x + 1) * sw) / dw));
  }
  // One 32-bit read per source pixel (B, G, R, X little-endian); frames are 4-byte aligned.
  const src = data.byteOffset % 4 === 0
    ? new Uint32Array(data.buffer, data.byteOffset, data.byteLength >> 2)
    : new Uint32Array(new Uint8Array(data).buffer);
  const stride32 = stride >> 2;
  if (sw <= 2 * dw && sh <= 2 * dh) {
    return {
      width: dw,
      height: dh,
      data: halveAtMost(src, stride32, x0, x1, sh, dw, dh),
    };
  }
  const sumB = new Uint32Array(dw);
  const sumG = new Uint32Array(dw);
  const sumR = new Uint32Array(dw);
  for (let y = 0; y < dh; y++) {
    const y0 = Math.floor((y * sh) / dh);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * sh) / dh));
    sumB.fill(0);
    sumG.fill(0);
    sumR.fill(0);
    for (let sy = y0; sy < y1; sy++) {
      const row = sy * stride32;
      for (let x = 0; x < dw; x++) {
        let b = 0, g = 0, r = 0;
        const end = row + x1[x];
        for (let i = row + x0[x]; i < end; i++) {
          const p = src[i];
          b += p & 255;
          g += (p >>> 8) & 255;
          r += (p >>> 16) & 255;
        }
        sumB[x] += b;
        sumG[x] += g;
        sumR[x] += r;
      }
    }
    const rows = y1 - y0;
    let o = y * dw * 4;
    for (let x = 0; x < dw; x++, o += 4) {
      const count = rows * (x1[x] - x0[x]);
      out[o] = ((sumB[x] + (count >> 1)) / count) | 0;
      out[o + 1] = ((sumG[x] + (count >> 1)) / count) | 0;
      out[o + 2] = ((sumR[x] + (count >> 1)) / count) | 0;
      out[o + 3] = 255;
    }
  }
  return { width: dw, height: dh, data: out };
}

/**
 * Shrinking by a factor up to 2: every source block is 1 or 2 pixels wide
 * and tall, so its average is that of its first and last row and column
 * (4 reads). Red and blue are summed together in two 16-bit lanes.
 */
function halveAtMost(
  src: Uint32Array,
  stride32: number,
  x0: Int32Array,
  x1: Int32Array,
  sh: number,
  dw: number,
  dh: number,
): Uint8Array<ArrayBuffer> {
  const out = new Uint32Array(dw * dh);
  const last = new Int32Array(dw);
  for (let x = 0; x < dw; x++) last[x] = x1[x] - 1;
  for (let y = 0, o = 0; y < dh; y++) {
    const y0 = Math.floor((y * sh) / dh);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * sh) / dh));
    const top = y0 * stride32;
    const bottom = (y1 - 1) * stride32;
    for (let x = 0; x < dw; x++, o++) {
      const a = src[top + x0[x]];
      const b = src[top + last[x]];
      const c = src[bottom + x0[x]];
      const d = src[bottom + last[x]];
      const rb = (a & 0xff00ff) + (b & 0xff00ff) + (c & 0xff00ff) +
        (d & 0xff00ff) + 0x20002;
      const g = ((a >>> 8) & 0xff) + ((b >>> 8) & 0xff) + ((c >>> 8) & 0xff) +
        ((d >>> 8) & 0xff) + 2;
      out[o] = (((rb >>> 2) & 0xff00ff) | ((g >>> 2) << 8) | 0xff000000) >>> 0;
    }
  }
  return new Uint8Array(out.buffer);
}

/** BGRX → RGB (3 channels) or RGBA (4). */
function reorder(pixels: Pixels, channels: 3 | 4): Uint8Array {
  const { data } = pixels;
  const count = pixels.width * pixels.height;
  const out = new Uint8Array(count * channels);
  for (let i = 0, o = 0; i < count * 4; i += 4, o += channels) {
    out[o] = data[i + 2];
    out[o + 1] = data[i + 1];
    out[o + 2] = data[i];
    if (channels === 4) out[o + 3] = 255;
  }
  return out;
}

export type ImageFormat = "png" | "jpeg";

export class ImageEncoder {
  #turbo: TurboJpegLibrary | undefined;
  #handle: Deno.PointerObject | null = null;
  /** Why libturbojpeg is not used, when it is not. */
  readonly turboMissing: string | undefined;

  constructor(options: { turbojpeg: boolean }) {
    if (!options.turbojpeg) {
      this.turboMissing = "turned off in config";
      return;
    }
    try {
      this.#turbo = openTurboJpeg();
      this.#handle = this.#turbo.symbols.tjInitCompress();
      if (this.#handle === null) throw new Error("tjInitCompress failed");
    } catch (error) {
      this.#turbo?.close();
      this.#turbo = undefined;
      this.turboMissing = error instanceof Error
        ? error.message
        : String(error);
    }
  }

  get jpegEncoder(): string {
    return this.#turbo ? "libturbojpeg" : "jpeg-js";
  }

  async encode(
    pixels: Pixels,
    format: ImageFormat,
    quality: number,
  ): Promise<Uint8Array> {
    const turbo = this.#turbo;
    if (format !== "png" && turbo && this.#handle) {
      return this.#turboJpeg(turbo, this.#handle, pixels, quality);
    }
    const { encodeJpeg, encodePng } = await loadCodec();
    if (format === "png") {
      return encodePng(reorder(pixels, 3), pixels.width, pixels.height, 3);
    }
    return encodeJpeg(reorder(pixels, 4), pixels.width, pixels.height, quality);
  }

  #turboJpeg(
    turbo: TurboJpegLibrary,
    handle: Deno.PointerObject,
    pixels: Pixels,
    quality: number,
  ): Uint8Array {
    const out = new BigUint64Array(1);
    const size = new BigUint64Array(1);
    const status = turbo.symbols.tjCompress2(
      handle,
      pixels.data,
      pixels.width,
      pixels.width * 4,
      pixels.height,
      TJ.PF_BGRX,
      out,
      size,
      TJ.SAMP_420,
      quality,
      TJ.FLAG_FASTDCT,
    );
    const pointer = Deno.UnsafePointer.create(out[0]);
    if (status !== 0 || pointer === null) {
      const message = turbo.symbols.tjGetErrorStr2(handle);
      if (pointer) turbo.symbols.tjFree(pointer);
      throw new Error(
        `JPEG encoding failed: ${
          message ? new Deno.UnsafePointerView(message).getCString() : status
        }`,
      );
    }
    const bytes = new Uint8Array(
      Deno.UnsafePointerView.getArrayBuffer(pointer, Number(size[0])).slice(0),
    );
    turbo.symbols.tjFree(pointer);
    return bytes;
  }

  close(): void {
    if (this.#turbo && this.#handle) {
      this.#turbo.symbols.tjDestroy(this.#handle);
    }
    this.#handle = null;
    this.#turbo?.close();
    this.#turbo = undefined;
  }
}

// The npm codecs load on the first screenshot that needs them: an idle
// daemon does not hold them (bench/README.md, idle memory).
function loadCodec(): Promise<typeof import("./image_codec.ts")> {
  return lazy("./image_codec.ts", import.meta.url);
}
