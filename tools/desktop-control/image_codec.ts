// The one import seam for the npm image encoders: fast-png (PNG) and jpeg-js
// (JPEG, used when the system's libturbojpeg is absent).

import { encode as encodePngImage } from "fast-png";
import jpeg from "jpeg-js";

/** PNG of 8-bit pixels with 3 (RGB) or 4 (RGBA) channels. */
export function encodePng(
  pixels: Uint8Array,
  width: number,
  height: number,
  channels: 3 | 4,
): Uint8Array {
  // Level 3: screenshots compress well already; higher levels cost 3× the time.
  return encodePngImage(
    { width, height, data: pixels, channels, depth: 8 },
    { zlib: { level: 3 } },
  );
}

/** Baseline JPEG of RGBA pixels (alpha ignored), quality 1-100. */
export function encodeJpeg(
  rgba: Uint8Array,
  width: number,
  height: number,
  quality: number,
): Uint8Array {
  const encoded = jpeg.encode({ data: rgba, width, height }, quality);
  return new Uint8Array(
    encoded.data.buffer,
    encoded.data.byteOffset,
    encoded.data.byteLength,
  );
}
