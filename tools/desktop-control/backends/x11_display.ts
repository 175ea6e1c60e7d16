// One X display connection: the libraries, error trapping (Xlib's default
// handler would exit the process on a BadWindow), atoms and properties.

import {
  cString,
  type LibcLibrary,
  openLibc,
  openX11,
  openXext,
  openXrandr,
  openXtst,
  X,
  X11_PACKAGES,
  type X11Library,
  XErrorEventLayout,
  type XextLibrary,
  type XrandrLibrary,
  type XtstLibrary,
} from "../../../ffi/x11.ts";
import { messageOf } from "../../../platform/errors.ts";
import { DesktopUnavailable, displayNotSet } from "./port.ts";
import { displayUnreachable } from "../config.ts";

interface XErrorRecord {
  code: number;
  request: number;
  resource: bigint;
}

// Xlib has one error handler per process: it files errors by display.
const pendingErrors = new Map<bigint, XErrorRecord>();
const ERROR_HANDLER = {
  parameters: ["pointer", "pointer"],
  result: "i32",
} as const;
let errorHandler: Deno.UnsafeCallback<typeof ERROR_HANDLER> | undefined;

const IO_ERROR_HANDLER = { parameters: ["pointer"], result: "i32" } as const;
const IO_EXIT_HANDLER = {
  parameters: ["pointer", "pointer"],
  result: "void",
} as const;
// Displays whose connection broke (the X server ended): never touched again.
const lostDisplays = new Set<bigint>();
let ioHandlers:
  | {
    error: Deno.UnsafeCallback<typeof IO_ERROR_HANDLER>;
    exit: Deno.UnsafeCallback<typeof IO_EXIT_HANDLER>;
  }
  | undefined;

function installIoHandlers(x11: X11Library): void {
  if (ioHandlers) return;
  ioHandlers = {
    // Replaces Xlib's "X connection to :N broken" line on stderr (the log channel).
    error: new Deno.UnsafeCallback(IO_ERROR_HANDLER, (display) => {
      lostDisplays.add(Deno.UnsafePointer.value(display));
      return 0;
    }),
    exit: new Deno.UnsafeCallback(IO_EXIT_HANDLER, (display) => {
      lostDisplays.add(Deno.UnsafePointer.value(display));
    }),
  };
  x11.symbols.XSetIOErrorHandler(ioHandlers.error.pointer);
}

function installErrorHandler(x11: X11Library): void {
  installIoHandlers(x11);
  if (errorHandler) return;
  const handler = new Deno.UnsafeCallback(
    ERROR_HANDLER,
    (display, event) => {
      if (event === null) return 0;
      const view = new Deno.UnsafePointerView(event);
      pendingErrors.set(Deno.UnsafePointer.value(display), {
        code: view.getUint8(XErrorEventLayout.errorCode),
        request: view.getUint8(XErrorEventLayout.requestCode),
        resource: view.getBigUint64(XErrorEventLayout.resourceId),
      });
      return 0;
    },
  );
  errorHandler = handler;
  x11.symbols.XSetErrorHandler(handler.pointer);
}

const ERROR_NAMES: Record<number, string> = {
  2: "BadValue",
  3: "BadWindow",
  8: "BadMatch",
  10: "BadAccess",
  11: "BadAlloc",
};

export interface Property {
  type: bigint;
  format: number;
  items: number;
  bytes: Uint8Array;
}

interface Libraries {
  x11: X11Library;
  xtst: XtstLibrary;
  xext?: XextLibrary;
  xrandr?: XrandrLibrary;
  libc: LibcLibrary;
}

// Opened once per process and never closed: Xlib's error handler lives in it.
let libraries: Libraries | undefined;

function loadLibraries(): Libraries {
  if (libraries) return libraries;
  const x11 = open("libX11.so.6", openX11);
  const xtst = open("libXtst.so.6", openXtst);
  let xext: XextLibrary | undefined;
  let xrandr: XrandrLibrary | undefined;
  try {
    xext = openXext();
  } catch {
    xext = undefined; // capture falls back to XGetImage
  }
  try {
    xrandr = openXrandr();
  } catch {
    xrandr = undefined; // one monitor: the whole screen
  }
  installErrorHandler(x11);
  libraries = { x11, xtst, xext, xrandr, libc: openLibc() };
  return libraries;
}

function open<T>(library: keyof typeof X11_PACKAGES, opener: () => T): T {
  try {
    return opener();
  } catch (error) {
    throw new DesktopUnavailable(
      `Cannot load ${library}: ${
        messageOf(error)
      }. Install it (Debian/Ubuntu: apt-get install ${X11_PACKAGES[library]}).`,
      "x11_libraries",
    );
  }
}

export class XDisplay {
  readonly x11: X11Library;
  readonly xtst: XtstLibrary;
  readonly xext: XextLibrary | undefined;
  readonly xrandr: XrandrLibrary | undefined;
  readonly libc: LibcLibrary;
  readonly pointer: Deno.PointerObject;
  readonly name: string;
  readonly root: bigint;
  readonly screenNumber: number;
  /** False with libX11 before 1.7: Xlib then exits the process when the X server goes away. */
  readonly survivesLoss: boolean;
  readonly #atoms = new Map<string, bigint>();
  #closed = false;

  private constructor(
    libs: Libraries,
    pointer: Deno.PointerObject,
    name: string,
    survivesLoss: boolean,
  ) {
    this.survivesLoss = survivesLoss;
    this.x11 = libs.x11;
    this.xtst = libs.xtst;
    this.xext = libs.xext;
    this.xrandr = libs.xrandr;
    this.libc = libs.libc;
    this.pointer = pointer;
    this.name = name;
    this.root = libs.x11.symbols.XDefaultRootWindow(pointer);
    this.screenNumber = libs.x11.symbols.XDefaultScreen(pointer);
  }

  /** Connects to `name` (`:99`), checks XTEST; throws DesktopUnavailable saying how to fix. */
  static open(name: string | undefined): XDisplay {
    if (name === undefined || name === "") throw displayNotSet();
    const libs = loadLibraries();
    const { x11, xtst } = libs;
    const pointer = x11.symbols.XOpenDisplay(cString(name));
    if (pointer === null) {
      throw new DesktopUnavailable(displayUnreachable(name), "display");
    }
    const ints = new Int32Array(4);
    if (
      xtst.symbols.XTestQueryExtension(
        pointer,
        ints.subarray(0, 1),
        ints.subarray(1, 2),
        ints.subarray(2, 3),
        ints.subarray(3, 4),
      ) === 0
    ) {
      x11.symbols.XCloseDisplay(pointer);
      throw new DesktopUnavailable(
        `X display "${name}" lacks the XTEST extension, so input cannot be sent. ` +
          'Enable it in the X server (Xorg: Section "Extensions" Option "XTEST" "Enable"; ' +
          "Xvfb has it by default).",
        "xtest",
      );
    }
    const exitHandler = x11.symbols.XSetIOErrorExitHandler;
    if (exitHandler && ioHandlers) {
      exitHandler(pointer, ioHandlers.exit.pointer, null);
    }
    return new XDisplay(libs, pointer, name, typeof exitHandler === "function");
  }

  /** Closed by us, or its connection broke: no Xlib call may use it. */
  get closed(): boolean {
    return this.#closed || this.lost;
  }

  /** The connection to the X server broke (it ended, or the session logged out). */
  get lost(): boolean {
    return lostDisplays.has(Deno.UnsafePointer.value(this.pointer));
  }

  /** Runs `body`, syncs, and throws if the X server answered with an error. */
  trap<T>(what: string, body: () => T): T {
    const key = Deno.UnsafePointer.value(this.pointer);
    pendingErrors.delete(key);
    const value = body();
    this.x11.symbols.XSync(this.pointer, 0);
    const error = pendingErrors.get(key);
    pendingErrors.delete(key);
    if (error) {
      const name = ERROR_NAMES[error.code] ?? `X error ${error.code}`;
      throw new Error(
        `${what} failed: ${name} (request ${error.request}, resource 0x${
          error.resource.toString(16)
        })`,
      );
    }
    return value;
  }

  sync(): void {
    this.x11.symbols.XSync(this.pointer, 0);
  }

  atom(name: string): bigint {
    let atom = this.#atoms.get(name);
    if (atom === undefined) {
      atom = this.x11.symbols.XInternAtom(this.pointer, cString(name), 0);
      this.#atoms.set(name, atom);
    }
    return atom;
  }

  /** A window property, or undefined when unset (or the window is gone). */
  property(
    window: bigint,
    name: string,
    type: bigint = X.AnyPropertyType,
  ): Property | undefined {
    const actualType = new BigUint64Array(1);
    const format = new Int32Array(1);
    const items = new BigUint64Array(1);
    const after = new BigUint64Array(1);
    const data = new BigUint64Array(1);
    const key = Deno.UnsafePointer.value(this.pointer);
    pendingErrors.delete(key);
    const status = this.x11.symbols.XGetWindowProperty(
      this.pointer,
      window,
      this.atom(name),
      0n,
      1n << 20n,
      0,
      type,
      actualType,
      format,
      items,
      after,
      data,
    );
    const failed = pendingErrors.has(key);
    pendingErrors.delete(key);
    const pointer = Deno.UnsafePointer.create(data[0]);
    if (status !== X.Success || failed || actualType[0] === 0n) {
      if (pointer) this.x11.symbols.XFree(pointer);
      return undefined;
    }
    const count = Number(items[0]);
    // Format-32 items are C longs (8 bytes on LP64), not 4 bytes.
    const size = format[0] === 32 ? 8 : format[0] / 8;
    const bytes = pointer && count > 0
      ? new Uint8Array(
        Deno.UnsafePointerView.getArrayBuffer(pointer, count * size).slice(0),
      )
      : new Uint8Array(0);
    if (pointer) this.x11.symbols.XFree(pointer);
    return { type: actualType[0], format: format[0], items: count, bytes };
  }

  /** Format-32 items (windows, atoms, cardinals) of a property. */
  longs(window: bigint, name: string): bigint[] {
    const property = this.property(window, name);
    if (!property || property.format !== 32) return [];
    return [...new BigUint64Array(property.bytes.buffer, 0, property.items)];
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.lost) this.x11.symbols.XCloseDisplay(this.pointer);
  }
}
