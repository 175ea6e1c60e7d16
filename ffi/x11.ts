// Deno.dlopen symbol tables for the X11 family: libX11, libXtst (XTest
// input), libXext (MIT-SHM capture), libXrandr (monitors), and the libc
// calls MIT-SHM needs. Tables only: the desktop backend owns the logic.
// Types follow Xlib on LP64: Window, Atom, KeySym, Time are `unsigned long`.

const x11Symbols = {
  XOpenDisplay: { parameters: ["buffer"], result: "pointer" },
  XCloseDisplay: { parameters: ["pointer"], result: "i32" },
  XDisplayString: { parameters: ["pointer"], result: "pointer" },
  XDefaultScreen: { parameters: ["pointer"], result: "i32" },
  XDefaultRootWindow: { parameters: ["pointer"], result: "u64" },
  XDisplayWidth: { parameters: ["pointer", "i32"], result: "i32" },
  XDisplayHeight: { parameters: ["pointer", "i32"], result: "i32" },
  XDefaultVisual: { parameters: ["pointer", "i32"], result: "pointer" },
  XDefaultDepth: { parameters: ["pointer", "i32"], result: "i32" },
  XSync: { parameters: ["pointer", "i32"], result: "i32" },
  XFlush: { parameters: ["pointer"], result: "i32" },
  XFree: { parameters: ["pointer"], result: "i32" },
  XSetErrorHandler: { parameters: ["function"], result: "pointer" },
  XSetIOErrorHandler: { parameters: ["function"], result: "pointer" },
  // libX11 1.7+: lets a client survive a lost connection instead of exit(1).
  XSetIOErrorExitHandler: {
    parameters: ["pointer", "function", "pointer"],
    result: "void",
    optional: true,
  },
  XQueryExtension: {
    parameters: ["pointer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  XQueryPointer: {
    parameters: [
      "pointer",
      "u64",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i32",
  },
  XGetImage: {
    parameters: ["pointer", "u64", "i32", "i32", "u32", "u32", "u64", "i32"],
    result: "pointer",
  },
  // A real function in libX11.so.6 (the macro calls image->f.destroy_image).
  XDestroyImage: { parameters: ["pointer"], result: "i32" },
  XQueryTree: {
    parameters: ["pointer", "u64", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  XFetchName: { parameters: ["pointer", "u64", "buffer"], result: "i32" },
  XGetAtomName: { parameters: ["pointer", "u64"], result: "pointer" },
  XInternAtom: { parameters: ["pointer", "buffer", "i32"], result: "u64" },
  XGetWindowProperty: {
    parameters: [
      "pointer",
      "u64",
      "u64",
      "i64",
      "i64",
      "i32",
      "u64",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i32",
  },
  XGetWindowAttributes: {
    parameters: ["pointer", "u64", "buffer"],
    result: "i32",
  },
  XTranslateCoordinates: {
    parameters: [
      "pointer",
      "u64",
      "u64",
      "i32",
      "i32",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i32",
  },
  XRaiseWindow: { parameters: ["pointer", "u64"], result: "i32" },
  XMapRaised: { parameters: ["pointer", "u64"], result: "i32" },
  XSetInputFocus: {
    parameters: ["pointer", "u64", "i32", "u64"],
    result: "i32",
  },
  XGetInputFocus: {
    parameters: ["pointer", "buffer", "buffer"],
    result: "i32",
  },
  XSendEvent: {
    parameters: ["pointer", "u64", "i32", "i64", "buffer"],
    result: "i32",
  },
  XGetSelectionOwner: { parameters: ["pointer", "u64"], result: "u64" },
  XStringToKeysym: { parameters: ["buffer"], result: "u64" },
  XKeysymToKeycode: { parameters: ["pointer", "u64"], result: "u8" },
  XDisplayKeycodes: {
    parameters: ["pointer", "buffer", "buffer"],
    result: "i32",
  },
  XGetKeyboardMapping: {
    parameters: ["pointer", "u8", "i32", "buffer"],
    result: "pointer",
  },
  XChangeKeyboardMapping: {
    parameters: ["pointer", "i32", "i32", "buffer", "i32"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

const xtstSymbols = {
  XTestQueryExtension: {
    parameters: ["pointer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  XTestFakeMotionEvent: {
    parameters: ["pointer", "i32", "i32", "i32", "u64"],
    result: "i32",
  },
  XTestFakeButtonEvent: {
    parameters: ["pointer", "u32", "i32", "u64"],
    result: "i32",
  },
  XTestFakeKeyEvent: {
    parameters: ["pointer", "u32", "i32", "u64"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

const xextSymbols = {
  XShmQueryExtension: { parameters: ["pointer"], result: "i32" },
  XShmCreateImage: {
    parameters: [
      "pointer",
      "pointer",
      "u32",
      "i32",
      "pointer",
      "pointer",
      "u32",
      "u32",
    ],
    result: "pointer",
  },
  XShmAttach: { parameters: ["pointer", "pointer"], result: "i32" },
  XShmDetach: { parameters: ["pointer", "pointer"], result: "i32" },
  XShmGetImage: {
    parameters: ["pointer", "u64", "pointer", "i32", "i32", "u64"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

const xrandrSymbols = {
  XRRGetMonitors: {
    parameters: ["pointer", "u64", "i32", "buffer"],
    result: "pointer",
  },
  XRRFreeMonitors: { parameters: ["pointer"], result: "void" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc: System V shared memory for MIT-SHM, and malloc for structs Xlib keeps a pointer to. */
const libcSymbols = {
  shmget: { parameters: ["i32", "usize", "i32"], result: "i32" },
  shmat: { parameters: ["i32", "pointer", "i32"], result: "pointer" },
  shmdt: { parameters: ["pointer"], result: "i32" },
  shmctl: { parameters: ["i32", "i32", "pointer"], result: "i32" },
  calloc: { parameters: ["usize", "usize"], result: "pointer" },
  free: { parameters: ["pointer"], result: "void" },
} as const satisfies Deno.ForeignLibraryInterface;

export type X11Library = Deno.DynamicLibrary<typeof x11Symbols>;
export type XtstLibrary = Deno.DynamicLibrary<typeof xtstSymbols>;
export type XextLibrary = Deno.DynamicLibrary<typeof xextSymbols>;
export type XrandrLibrary = Deno.DynamicLibrary<typeof xrandrSymbols>;
export type LibcLibrary = Deno.DynamicLibrary<typeof libcSymbols>;

/** The Debian package that ships each library, for error messages. */
export const X11_PACKAGES = {
  "libX11.so.6": "libx11-6",
  "libXtst.so.6": "libxtst6",
  "libXext.so.6": "libxext6",
  "libXrandr.so.2": "libxrandr2",
} as const;

export function openX11(): X11Library {
  return Deno.dlopen("libX11.so.6", x11Symbols);
}

export function openXtst(): XtstLibrary {
  return Deno.dlopen("libXtst.so.6", xtstSymbols);
}

export function openXext(): XextLibrary {
  return Deno.dlopen("libXext.so.6", xextSymbols);
}

export function openXrandr(): XrandrLibrary {
  return Deno.dlopen("libXrandr.so.2", xrandrSymbols);
}

export function openLibc(): LibcLibrary {
  return Deno.dlopen("libc.so.6", libcSymbols);
}

/** Xlib constants the backend uses (X.h, Xlib.h, XShm.h, sys/ipc.h). */
export const X = {
  None: 0n,
  CurrentTime: 0n,
  AnyPropertyType: 0n,
  AllPlanes: 0xffff_ffff_ffff_ffffn,
  ZPixmap: 2,
  RevertToParent: 2,
  IsViewable: 2,
  Success: 0,
  ClientMessage: 33,
  SubstructureNotifyMask: 1n << 19n,
  SubstructureRedirectMask: 1n << 20n,
  IPC_PRIVATE: 0,
  IPC_CREAT: 0o1000,
  IPC_RMID: 0,
  NoSymbol: 0n,
} as const;

/**
 * Byte offsets of Xlib structs on x86_64/aarch64 Linux (LP64), read with
 * Deno.UnsafePointerView or a DataView over a buffer.
 */
export const XImageLayout = {
  width: 0,
  height: 4,
  data: 16,
  bytesPerLine: 44,
  bitsPerPixel: 48,
  size: 136,
} as const;

export const XWindowAttributesLayout = {
  x: 0,
  y: 4,
  width: 8,
  height: 12,
  borderWidth: 16,
  mapState: 92,
  overrideRedirect: 120,
  size: 136,
} as const;

/** XShmSegmentInfo: shmseg (ulong), shmid (int), shmaddr (char*), readOnly (Bool). */
export const XShmSegmentInfoLayout = {
  shmseg: 0,
  shmid: 8,
  shmaddr: 16,
  readOnly: 24,
  size: 32,
} as const;

/** XRRMonitorInfo: name (Atom), primary, automatic, noutput, x, y, width, height, mwidth, mheight, outputs*. */
export const XRRMonitorInfoLayout = {
  name: 0,
  primary: 8,
  x: 20,
  y: 24,
  width: 28,
  height: 32,
  size: 56,
} as const;

/** XErrorEvent: type, display*, resourceid, serial, error_code, request_code, minor_code. */
export const XErrorEventLayout = {
  resourceId: 16,
  errorCode: 32,
  requestCode: 33,
} as const;

/** XClientMessageEvent inside the 192-byte XEvent union. */
export const XClientMessageLayout = {
  type: 0,
  sendEvent: 16,
  window: 32,
  messageType: 40,
  format: 48,
  data: 56,
  size: 192,
} as const;

/** A NUL-terminated C string for `buffer` parameters. */
export function cString(value: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(value + "\0");
}
