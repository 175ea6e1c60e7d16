// The Desktop port on macOS through ffi/darwin.ts: CGEvent input (unicode
// typing via CGEventKeyboardSetUnicodeString), CGDisplayCreateImageForRect
// capture, CGWindowListCopyWindowInfo; Start checks AXIsProcessTrusted and
// CGPreflightScreenCaptureAccess. Untested here (no Mac in CI).

import {
  type ApplicationServicesLibrary,
  CG,
  cgStruct,
  type CoreFoundationLibrary,
  type CoreGraphicsLibrary,
  openApplicationServices,
  openCoreFoundation,
  openCoreGraphics,
} from "../../../ffi/darwin.ts";
import type * as port from "./port.ts";
import { DesktopUnavailable, dragPath } from "./port.ts";
import { messageOf } from "../../../platform/errors.ts";

/** ANSI-layout virtual key codes (Events.h) for named keys and shortcut letters. */
const KEYCODES: Record<string, number> = {
  enter: 0x24,
  return: 0x24,
  tab: 0x30,
  space: 0x31,
  backspace: 0x33,
  escape: 0x35,
  esc: 0x35,
  delete: 0x75,
  del: 0x75,
  left: 0x7b,
  right: 0x7c,
  down: 0x7d,
  up: 0x7e,
  home: 0x73,
  end: 0x77,
  pageup: 0x74,
  page_up: 0x74,
  pagedown: 0x79,
  page_down: 0x79,
  f1: 0x7a,
  f2: 0x78,
  f3: 0x63,
  f4: 0x76,
  f5: 0x60,
  f6: 0x61,
  f7: 0x62,
  f8: 0x64,
  f9: 0x65,
  f10: 0x6d,
  f11: 0x67,
  f12: 0x6f,
};
const LETTERS = "asdfhgzxcv?bqweryt123465=97-80]ou[ip?lj'k;\\,/nm.";
for (let i = 0; i < LETTERS.length; i++) {
  if (LETTERS[i] !== "?") KEYCODES[LETTERS[i]] = i;
}

const MODIFIERS: Record<string, bigint> = {
  cmd: CG.kCGEventFlagMaskCommand,
  command: CG.kCGEventFlagMaskCommand,
  super: CG.kCGEventFlagMaskCommand,
  meta: CG.kCGEventFlagMaskCommand,
  win: CG.kCGEventFlagMaskCommand,
  ctrl: CG.kCGEventFlagMaskControl,
  control: CG.kCGEventFlagMaskControl,
  alt: CG.kCGEventFlagMaskAlternate,
  option: CG.kCGEventFlagMaskAlternate,
  shift: CG.kCGEventFlagMaskShift,
};

const BUTTONS: Record<port.MouseButton, [number, number, number]> = {
  left: [CG.kCGEventLeftMouseDown, CG.kCGEventLeftMouseUp, 0],
  right: [CG.kCGEventRightMouseDown, CG.kCGEventRightMouseUp, 1],
  middle: [CG.kCGEventOtherMouseDown, CG.kCGEventOtherMouseUp, 2],
};

export class DarwinDesktop implements port.Desktop {
  readonly platform = "darwin";
  readonly #cg: CoreGraphicsLibrary;
  readonly #cf: CoreFoundationLibrary;
  readonly #display: number;
  readonly #keys = new Map<string, Deno.PointerValue>();

  private constructor(cg: CoreGraphicsLibrary, cf: CoreFoundationLibrary) {
    this.#cg = cg;
    this.#cf = cf;
    this.#display = cg.symbols.CGMainDisplayID();
  }

  /** Checks both permissions first: each missing one is named with where to grant it. */
  static open(): DarwinDesktop {
    let cg: CoreGraphicsLibrary;
    let cf: CoreFoundationLibrary;
    let ax: ApplicationServicesLibrary;
    try {
      cg = openCoreGraphics();
      cf = openCoreFoundation();
      ax = openApplicationServices();
    } catch (error) {
      throw new DesktopUnavailable(
        `Cannot load CoreGraphics: ${messageOf(error)}`,
        "macos_frameworks",
      );
    }
    const trusted = ax.symbols.AXIsProcessTrusted();
    ax.close();
    if (!trusted) {
      throw new DesktopUnavailable(
        "Accessibility permission is missing: mouse and keyboard input would be dropped. Grant it in " +
          "System Settings → Privacy & Security → Accessibility to the app that runs agentd " +
          "(Terminal, or the agentd binary), then restart agentd.",
        "accessibility",
      );
    }
    if (!cg.symbols.CGPreflightScreenCaptureAccess()) {
      throw new DesktopUnavailable(
        "Screen Recording permission is missing: screenshots would show only the wallpaper. Grant it " +
          "in System Settings → Privacy & Security → Screen Recording to the app that runs agentd, " +
          "then restart agentd.",
        "screen_recording",
      );
    }
    return new DarwinDesktop(cg, cf);
  }

  screen(): port.Region {
    const rect = new Float64Array(
      this.#cg.symbols.CGDisplayBounds(this.#display).buffer,
    );
    // Points, not pixels: events and CGDisplayCreateImageForRect both take points.
    return { x: rect[0], y: rect[1], width: rect[2], height: rect[3] };
  }

  monitors(): port.Monitor[] {
    return [{ name: "main", primary: true, ...this.screen() }];
  }

  capture(region: port.Region): port.Frame {
    const cg = this.#cg.symbols;
    const image = cg.CGDisplayCreateImageForRect(
      this.#display,
      cgStruct(region.x, region.y, region.width, region.height),
    );
    if (image === null) throw new Error("CGDisplayCreateImageForRect failed");
    try {
      const width = Number(cg.CGImageGetWidth(image));
      const height = Number(cg.CGImageGetHeight(image));
      const stride = Number(cg.CGImageGetBytesPerRow(image));
      const data = cg.CGDataProviderCopyData(cg.CGImageGetDataProvider(image));
      if (data === null) throw new Error("CGDataProviderCopyData failed");
      try {
        const bytes = this.#cf.symbols.CFDataGetBytePtr(data);
        if (bytes === null) throw new Error("empty image data");
        // BGRA, premultiplied first, little-endian: the B, G, R, X order of the port.
        const pixels = new Uint8Array(
          Deno.UnsafePointerView.getArrayBuffer(bytes, stride * height).slice(
            0,
          ),
        );
        // On Retina screens the image has more pixels than the region has points.
        return { width, height, stride, data: pixels };
      } finally {
        this.#cf.symbols.CFRelease(data);
      }
    } finally {
      cg.CGImageRelease(image);
    }
  }

  pointer(): port.Point {
    const event = this.#cg.symbols.CGEventCreate(null);
    const point = new Float64Array(
      this.#cg.symbols.CGEventGetLocation(event).buffer,
    );
    this.#cf.symbols.CFRelease(event);
    return { x: Math.round(point[0]), y: Math.round(point[1]) };
  }

  #mouse(type: number, point: port.Point, button: number): void {
    const event = this.#cg.symbols.CGEventCreateMouseEvent(
      null,
      type,
      cgStruct(point.x, point.y),
      button,
    );
    this.#cg.symbols.CGEventPost(CG.kCGHIDEventTap, event);
    this.#cf.symbols.CFRelease(event);
  }

  moveMouse(point: port.Point): void {
    this.#mouse(CG.kCGEventMouseMoved, point, 0);
  }

  click(point: port.Point, button: port.MouseButton): void {
    const [down, up, number] = BUTTONS[button];
    this.moveMouse(point);
    this.#mouse(down, point, number);
    this.#mouse(up, point, number);
  }

  async drag(
    from: port.Point,
    to: port.Point,
    button: port.MouseButton,
  ): Promise<void> {
    const [down, up, number] = BUTTONS[button];
    this.#mouse(down, from, number);
    await dragPath(
      from,
      to,
      (point) => this.#mouse(CG.kCGEventLeftMouseDragged, point, number),
    );
    this.#mouse(up, to, number);
  }

  #key(code: number, down: boolean, flags = 0n, text?: string): void {
    const event = this.#cg.symbols.CGEventCreateKeyboardEvent(null, code, down);
    if (flags !== 0n) this.#cg.symbols.CGEventSetFlags(event, flags);
    if (text !== undefined) {
      const units = new Uint16Array([...text].flatMap((char) => {
        const out: number[] = [];
        for (let i = 0; i < char.length; i++) out.push(char.charCodeAt(i));
        return out;
      }));
      this.#cg.symbols.CGEventKeyboardSetUnicodeString(
        event,
        BigInt(units.length),
        new Uint8Array(units.buffer),
      );
    }
    this.#cg.symbols.CGEventPost(CG.kCGHIDEventTap, event);
    this.#cf.symbols.CFRelease(event);
  }

  typeText(text: string): port.TypeReport {
    let chars = 0;
    for (const char of text.replaceAll("\r\n", "\n")) {
      chars++;
      if (char === "\n" || char === "\t") {
        const code = char === "\n" ? 0x24 : 0x30;
        this.#key(code, true);
        this.#key(code, false);
        continue;
      }
      // The string rides on the event: any character, whatever the layout.
      this.#key(0, true, 0n, char);
      this.#key(0, false, 0n, char);
    }
    return { chars, remapped: 0 };
  }

  pressKeys(keys: readonly string[]): void {
    let flags = 0n;
    const codes: number[] = [];
    for (const key of keys) {
      const lower = key.toLowerCase();
      const modifier = MODIFIERS[lower];
      if (modifier !== undefined) {
        flags |= modifier;
        continue;
      }
      const code = KEYCODES[lower];
      if (code === undefined) {
        throw new Error(
          `Unknown key "${key}": use cmd, ctrl, alt, shift, enter, tab, escape, backspace, delete, ` +
            "arrows, home, end, pageup, pagedown, f1-f12, a letter, digit or punctuation key",
        );
      }
      codes.push(code);
    }
    for (const code of codes) this.#key(code, true, flags);
    for (const code of codes.toReversed()) this.#key(code, false, flags);
  }

  #cfKey(name: string): Deno.PointerValue {
    let key = this.#keys.get(name);
    if (key === undefined) {
      key = this.#cf.symbols.CFStringCreateWithCString(
        null,
        new TextEncoder().encode(name + "\0"),
        CG.kCFStringEncodingUTF8,
      );
      this.#keys.set(name, key);
    }
    return key;
  }

  #string(dictionary: Deno.PointerValue, name: string): string {
    const value = this.#cf.symbols.CFDictionaryGetValue(
      dictionary,
      this.#cfKey(name),
    );
    if (value === null) return "";
    const buffer = new Uint8Array(2048);
    if (
      !this.#cf.symbols.CFStringGetCString(
        value,
        buffer,
        BigInt(buffer.length),
        CG.kCFStringEncodingUTF8,
      )
    ) return "";
    return new TextDecoder().decode(buffer.subarray(0, buffer.indexOf(0)));
  }

  #number(dictionary: Deno.PointerValue, name: string): number {
    const value = this.#cf.symbols.CFDictionaryGetValue(
      dictionary,
      this.#cfKey(name),
    );
    if (value === null) return 0;
    const out = new Float64Array(1);
    this.#cf.symbols.CFNumberGetValue(
      value,
      CG.kCFNumberFloat64Type,
      new Uint8Array(out.buffer),
    );
    return out[0];
  }

  windows(includeHidden: boolean): port.WindowInfo[] {
    const option = includeHidden
      ? CG.kCGWindowListOptionAll
      : CG.kCGWindowListOptionOnScreenOnly |
        CG.kCGWindowListExcludeDesktopElements;
    const list = this.#cg.symbols.CGWindowListCopyWindowInfo(option, 0);
    if (list === null) return [];
    const windows: port.WindowInfo[] = [];
    try {
      const count = Number(this.#cf.symbols.CFArrayGetCount(list));
      for (let i = 0; i < count; i++) {
        const info = this.#cf.symbols.CFArrayGetValueAtIndex(list, BigInt(i));
        if (this.#number(info, "kCGWindowLayer") !== 0 && !includeHidden) {
          continue; // menu bar, dock, overlays
        }
        const bounds = this.#cf.symbols.CFDictionaryGetValue(
          info,
          this.#cfKey("kCGWindowBounds"),
        );
        windows.push({
          id: String(this.#number(info, "kCGWindowNumber")),
          title: this.#string(info, "kCGWindowName"),
          app: this.#string(info, "kCGWindowOwnerName"),
          pid: this.#number(info, "kCGWindowOwnerPID") || null,
          x: bounds ? this.#number(bounds, "X") : 0,
          y: bounds ? this.#number(bounds, "Y") : 0,
          width: bounds ? this.#number(bounds, "Width") : 0,
          height: bounds ? this.#number(bounds, "Height") : 0,
          visible: this.#number(info, "kCGWindowIsOnscreen") !== 0,
          // The list is front to back: the first normal window is the focused one.
          focused: windows.length === 0 && !includeHidden,
        });
      }
    } finally {
      this.#cf.symbols.CFRelease(list);
    }
    return windows;
  }

  async focusWindow(id: string): Promise<{ focused: boolean; via: string }> {
    const window = this.windows(true).find((each) => each.id === id);
    if (!window || window.pid === null) throw new Error(`No window ${id}`);
    const pid = window.pid;
    // Raising another app's window needs System Events (Apple Events), not CGEvent.
    const status = await new Deno.Command("osascript", {
      args: [
        "-e",
        `tell application "System Events" to set frontmost of (first process whose unix id is ${pid}) to true`,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    if (!status.success) {
      throw new Error(
        "osascript could not raise the window: allow agentd to control System Events " +
          "(System Settings → Privacy & Security → Automation)",
      );
    }
    const deadline = Date.now() + 2000;
    while (this.windows(false)[0]?.pid !== pid) {
      if (Date.now() > deadline) return { focused: false, via: "osascript" };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { focused: true, via: "osascript" };
  }

  health() {
    const screen = this.screen();
    return {
      screen: { width: screen.width, height: screen.height },
      capture: "CGDisplayCreateImageForRect",
      input: "CGEvent",
      permissions: "accessibility, screen_recording",
    };
  }

  close(): void {
    for (const key of this.#keys.values()) this.#cf.symbols.CFRelease(key);
    this.#keys.clear();
    this.#cg.close();
    this.#cf.close();
  }
}
