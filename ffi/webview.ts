// The webview C library (github.com/webview/webview) through Deno.dlopen.
// The prebuilt libraries come from the npm package webview-bun (only its
// build/ folder is used, not its Bun code); on Linux they link WebKitGTK 6.

import pkg from "webview-bun/package.json" with { type: "json" };

const SYMBOLS = {
  webview_create: { parameters: ["i32", "pointer"], result: "pointer" },
  webview_destroy: { parameters: ["pointer"], result: "i32" },
  webview_run: { parameters: ["pointer"], result: "i32", nonblocking: false },
  webview_terminate: { parameters: ["pointer"], result: "i32" },
  webview_dispatch: {
    parameters: ["pointer", "function", "pointer"],
    result: "i32",
  },
  webview_get_window: { parameters: ["pointer"], result: "pointer" },
  webview_set_title: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_set_size: {
    parameters: ["pointer", "i32", "i32", "i32"],
    result: "i32",
  },
  webview_navigate: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_set_html: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_init: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_eval: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_bind: {
    parameters: ["pointer", "buffer", "function", "pointer"],
    result: "i32",
  },
  webview_unbind: { parameters: ["pointer", "buffer"], result: "i32" },
  webview_return: {
    parameters: ["pointer", "buffer", "i32", "buffer"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

type Library = Deno.DynamicLibrary<typeof SYMBOLS>;

/** webview_set_size hints. */
export const SizeHint = { none: 0, min: 1, max: 2, fixed: 3 } as const;

/** The library could not be found or loaded; the message says what to install. */
export class WebviewUnavailable extends Error {
  override name = "WebviewUnavailable";
}

/** The prebuilt library's file name for this OS and architecture. */
export function libraryFileName(
  os: typeof Deno.build.os = Deno.build.os,
  arch: typeof Deno.build.arch = Deno.build.arch,
): string {
  switch (os) {
    case "darwin":
      return "libwebview.dylib";
    case "windows":
      return "libwebview.dll";
    default:
      return arch === "aarch64" ? "libwebview-arm64.so" : "libwebview-x64.so";
  }
}

/** Where the library is: `AGENTD_WEBVIEW_LIB`, else the npm package's build/ folder. */
export function libraryPath(env: Record<string, string> = {}): string {
  const override = env.AGENTD_WEBVIEW_LIB;
  if (override) return override;
  const manifest = new URL(import.meta.resolve("webview-bun/package.json"));
  return decodeURIComponent(
    new URL(`build/${libraryFileName()}`, manifest).pathname,
  );
}

/** What the OS needs besides the library, for error messages. */
export function systemHint(): string {
  switch (Deno.build.os) {
    case "linux":
      return "it needs WebKitGTK 6 and GTK 4: on Debian/Ubuntu `apt-get install libwebkitgtk-6.0-4`";
    case "windows":
      return "it needs the Microsoft Edge WebView2 runtime";
    default:
      return "it needs the system WebKit framework";
  }
}

/** Opens the library, or throws WebviewUnavailable naming what is missing. */
export function openLibrary(env: Record<string, string> = {}): Library {
  const path = libraryPath(env);
  try {
    return Deno.dlopen(path, SYMBOLS);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WebviewUnavailable(
      `cannot load the webview library ${path} (webview-bun@${pkg.version}): ${reason}; ${systemHint()}`,
    );
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function cString(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${text}\0`);
}

/** A JS→Deno call from the page: the arguments array, the answer as JSON. */
export type Binding = (...args: unknown[]) => unknown | Promise<unknown>;

/** One native window. `run()` blocks the thread until the window closes. */
export class Webview {
  readonly #lib: Library;
  readonly #handle: Deno.PointerValue;
  /** Kept alive while the window lives; closed by destroy(). */
  readonly #callbacks: { close(): void }[] = [];
  #destroyed = false;

  constructor(options: { debug?: boolean; env?: Record<string, string> } = {}) {
    this.#lib = openLibrary(options.env);
    this.#handle = this.#lib.symbols.webview_create(
      options.debug ? 1 : 0,
      null,
    );
    if (this.#handle === null) {
      this.#lib.close();
      throw new WebviewUnavailable(
        `webview_create failed: no window could be made (is there a display? ${systemHint()})`,
      );
    }
  }

  set title(title: string) {
    this.#lib.symbols.webview_set_title(this.#handle, cString(title));
  }

  setSize(width: number, height: number, hint: number = SizeHint.none): void {
    this.#lib.symbols.webview_set_size(this.#handle, width, height, hint);
  }

  navigate(url: string): void {
    this.#lib.symbols.webview_navigate(this.#handle, cString(url));
  }

  setHtml(html: string): void {
    this.#lib.symbols.webview_set_html(this.#handle, cString(html));
  }

  /** Script run at the start of every page the window loads. */
  init(script: string): void {
    this.#lib.symbols.webview_init(this.#handle, cString(script));
  }

  eval(script: string): void {
    this.#lib.symbols.webview_eval(this.#handle, cString(script));
  }

  /** Exposes `window[name](...args)` to the page; it resolves with `fn`'s answer. */
  bind(name: string, fn: Binding): void {
    const callback = new Deno.UnsafeCallback(
      {
        parameters: ["pointer", "pointer", "pointer"],
        result: "void",
      } as const,
      (idPointer, requestPointer) => {
        const id = pointerString(idPointer);
        const request = pointerString(requestPointer);
        this.#answer(id, request, fn);
      },
    );
    this.#callbacks.push(callback);
    this.#lib.symbols.webview_bind(
      this.#handle,
      cString(name),
      callback.pointer,
      null,
    );
  }

  /**
   * Answers a page call. A plain result is returned at once (the callback
   * runs inside webview_run, where no promise can settle); a promise is
   * answered when it settles, which needs the event loop to turn.
   */
  #answer(id: string, request: string, fn: Binding): void {
    let result: unknown;
    try {
      const args: unknown = JSON.parse(request);
      result = fn(...(Array.isArray(args) ? args : []));
    } catch (error) {
      this.#return(id, 1, error instanceof Error ? error.message : error);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (value) => this.#return(id, 0, value),
        (error) =>
          this.#return(id, 1, error instanceof Error ? error.message : error),
      );
    } else {
      this.#return(id, 0, result);
    }
  }

  #return(id: string, status: number, value: unknown): void {
    this.#lib.symbols.webview_return(
      this.#handle,
      cString(id),
      status,
      cString(JSON.stringify(value) ?? "null"),
    );
  }

  /** Blocks until the window is closed or `terminate()` is called. */
  run(): void {
    this.#lib.symbols.webview_run(this.#handle);
  }

  terminate(): void {
    this.#lib.symbols.webview_terminate(this.#handle);
  }

  /** Runs `fn` on the window's thread (safe from other threads). */
  dispatch(fn: () => void): void {
    const callback = new Deno.UnsafeCallback(
      { parameters: ["pointer", "pointer"], result: "void" } as const,
      () => {
        fn();
        callback.close();
      },
    );
    this.#lib.symbols.webview_dispatch(this.#handle, callback.pointer, null);
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#lib.symbols.webview_destroy(this.#handle);
    for (const callback of this.#callbacks) callback.close();
    this.#lib.close();
  }
}

function pointerString(pointer: Deno.PointerValue): string {
  if (pointer === null) return "";
  return decoder.decode(
    new Uint8Array(
      Deno.UnsafePointerView.getArrayBuffer(
        pointer,
        cStringLength(pointer),
      ),
    ),
  );
}

function cStringLength(pointer: Deno.PointerObject): number {
  const view = new Deno.UnsafePointerView(pointer);
  let length = 0;
  while (view.getUint8(length) !== 0) length++;
  return length;
}
