// Deno.dlopen symbol table for libturbojpeg (libjpeg-turbo's TurboJPEG API),
// the fast JPEG encoder for screenshots; the caller falls back to a JS
// encoder when the library is absent.

const turbojpegSymbols = {
  tjInitCompress: { parameters: [], result: "pointer" },
  tjDestroy: { parameters: ["pointer"], result: "i32" },
  tjCompress2: {
    parameters: [
      "pointer",
      "buffer",
      "i32",
      "i32",
      "i32",
      "i32",
      "buffer",
      "buffer",
      "i32",
      "i32",
      "i32",
    ],
    result: "i32",
  },
  tjFree: { parameters: ["pointer"], result: "void" },
  tjGetErrorStr2: { parameters: ["pointer"], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

export type TurboJpegLibrary = Deno.DynamicLibrary<typeof turbojpegSymbols>;

/** The library's file name on Linux, macOS and Windows. */
export function turbojpegFileName(): string {
  switch (Deno.build.os) {
    case "darwin":
      return "libturbojpeg.0.dylib";
    case "windows":
      return "turbojpeg.dll";
    default:
      return "libturbojpeg.so.0";
  }
}

export function openTurboJpeg(): TurboJpegLibrary {
  return Deno.dlopen(turbojpegFileName(), turbojpegSymbols);
}

/** turbojpeg.h constants. */
export const TJ = {
  PF_BGRX: 3,
  SAMP_420: 2,
  FLAG_FASTDCT: 2048,
} as const;
