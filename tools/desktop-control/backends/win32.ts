// The Desktop port on Windows through ffi/win32.ts: SendInput (unicode
// typing with KEYEVENTF_UNICODE), GDI BitBlt capture, EnumWindows. Untested
// here (no Windows machine in CI): AGENTS.md says so.

import {
  BITMAPINFO_SIZE,
  ENUM_WINDOWS_PROC,
  type Gdi32Library,
  INPUT_SIZE,
  openGdi32,
  openUser32,
  type User32Library,
  W,
} from "../../../ffi/win32.ts";
import type * as port from "./port.ts";
import { DesktopUnavailable, dragPath } from "./port.ts";
import { messageOf } from "../../../platform/errors.ts";

const VK: Record<string, number> = {
  ctrl: 0x11,
  control: 0x11,
  shift: 0x10,
  alt: 0x12,
  option: 0x12,
  super: 0x5b,
  win: 0x5b,
  windows: 0x5b,
  cmd: 0x5b,
  command: 0x5b,
  meta: 0x5b,
  enter: 0x0d,
  return: 0x0d,
  esc: 0x1b,
  escape: 0x1b,
  tab: 0x09,
  backspace: 0x08,
  delete: 0x2e,
  del: 0x2e,
  insert: 0x2d,
  space: 0x20,
  left: 0x25,
  up: 0x26,
  right: 0x27,
  down: 0x28,
  home: 0x24,
  end: 0x23,
  pageup: 0x21,
  page_up: 0x21,
  pagedown: 0x22,
  page_down: 0x22,
  capslock: 0x14,
  print: 0x2c,
  printscreen: 0x2c,
  pause: 0x13,
  menu: 0x5d,
};

const BUTTON_FLAGS: Record<port.MouseButton, [number, number]> = {
  left: [W.MOUSEEVENTF_LEFTDOWN, W.MOUSEEVENTF_LEFTUP],
  right: [W.MOUSEEVENTF_RIGHTDOWN, W.MOUSEEVENTF_RIGHTUP],
  middle: [W.MOUSEEVENTF_MIDDLEDOWN, W.MOUSEEVENTF_MIDDLEUP],
};

function hwndId(hwnd: Deno.PointerValue): string {
  return `0x${Deno.UnsafePointer.value(hwnd).toString(16)}`;
}

export class Win32Desktop implements port.Desktop {
  readonly platform = "win32";
  readonly #user32: User32Library;
  readonly #gdi32: Gdi32Library;

  private constructor(user32: User32Library, gdi32: Gdi32Library) {
    this.#user32 = user32;
    this.#gdi32 = gdi32;
  }

  static open(): Win32Desktop {
    let user32: User32Library;
    let gdi32: Gdi32Library;
    try {
      user32 = openUser32();
      gdi32 = openGdi32();
    } catch (error) {
      throw new DesktopUnavailable(
        `Cannot load user32/gdi32: ${messageOf(error)}`,
        "win32_libraries",
      );
    }
    // Physical pixels, so screenshots and clicks agree on HiDPI screens.
    user32.symbols.SetProcessDPIAware();
    return new Win32Desktop(user32, gdi32);
  }

  screen(): port.Region {
    const m = this.#user32.symbols.GetSystemMetrics;
    return {
      x: m(W.SM_XVIRTUALSCREEN),
      y: m(W.SM_YVIRTUALSCREEN),
      width: m(W.SM_CXVIRTUALSCREEN),
      height: m(W.SM_CYVIRTUALSCREEN),
    };
  }

  monitors(): port.Monitor[] {
    return [{ name: "virtual-screen", primary: true, ...this.screen() }];
  }

  capture(region: port.Region): port.Frame {
    const u = this.#user32.symbols;
    const g = this.#gdi32.symbols;
    const screen = u.GetDC(null);
    const memory = g.CreateCompatibleDC(screen);
    const bitmap = g.CreateCompatibleBitmap(
      screen,
      region.width,
      region.height,
    );
    const previous = g.SelectObject(memory, bitmap);
    try {
      if (
        g.BitBlt(
          memory,
          0,
          0,
          region.width,
          region.height,
          screen,
          region.x,
          region.y,
          W.SRCCOPY | W.CAPTUREBLT,
        ) === 0
      ) throw new Error("BitBlt failed (a secure desktop or UAC prompt?)");
      const info = new DataView(new ArrayBuffer(BITMAPINFO_SIZE));
      info.setUint32(0, 40, true); // biSize
      info.setInt32(4, region.width, true);
      info.setInt32(8, -region.height, true); // negative: top-down rows
      info.setUint16(12, 1, true); // planes
      info.setUint16(14, 32, true); // BGRX
      const stride = region.width * 4;
      const data = new Uint8Array(stride * region.height);
      g.SelectObject(memory, previous);
      const rows = g.GetDIBits(
        memory,
        bitmap,
        0,
        region.height,
        data,
        new Uint8Array(info.buffer),
        W.DIB_RGB_COLORS,
      );
      if (rows === 0) throw new Error("GetDIBits failed");
      return { width: region.width, height: region.height, stride, data };
    } finally {
      g.DeleteObject(bitmap);
      g.DeleteDC(memory);
      u.ReleaseDC(null, screen);
    }
  }

  pointer(): port.Point {
    const point = new Int32Array(2);
    this.#user32.symbols.GetCursorPos(point);
    return { x: point[0], y: point[1] };
  }

  moveMouse(point: port.Point): void {
    this.#user32.symbols.SetCursorPos(point.x, point.y);
  }

  #mouse(flags: number): void {
    const input = new DataView(new ArrayBuffer(INPUT_SIZE));
    input.setUint32(0, W.INPUT_MOUSE, true);
    input.setUint32(20, flags, true); // MOUSEINPUT.dwFlags
    this.#send([input]);
  }

  #send(inputs: DataView[]): void {
    const buffer = new Uint8Array(inputs.length * INPUT_SIZE);
    inputs.forEach((input, i) =>
      buffer.set(new Uint8Array(input.buffer), i * INPUT_SIZE)
    );
    const sent = this.#user32.symbols.SendInput(
      inputs.length,
      buffer,
      INPUT_SIZE,
    );
    if (sent !== inputs.length) {
      throw new Error(
        "SendInput was blocked (UIPI: the target runs elevated, or the desktop is locked)",
      );
    }
  }

  click(point: port.Point, button: port.MouseButton): void {
    this.moveMouse(point);
    const [down, up] = BUTTON_FLAGS[button];
    this.#mouse(down);
    this.#mouse(up);
  }

  async drag(
    from: port.Point,
    to: port.Point,
    button: port.MouseButton,
  ): Promise<void> {
    const [down, up] = BUTTON_FLAGS[button];
    this.moveMouse(from);
    this.#mouse(down);
    await dragPath(
      from,
      to,
      ({ x, y }) => this.moveMouse({ x: Math.round(x), y: Math.round(y) }),
    );
    this.#mouse(up);
  }

  #key(vk: number, scan: number, flags: number): DataView {
    const input = new DataView(new ArrayBuffer(INPUT_SIZE));
    input.setUint32(0, W.INPUT_KEYBOARD, true);
    input.setUint16(8, vk, true);
    input.setUint16(10, scan, true);
    input.setUint32(12, flags, true);
    return input;
  }

  typeText(text: string): port.TypeReport {
    const inputs: DataView[] = [];
    let chars = 0;
    for (const char of text.replaceAll("\r\n", "\n")) {
      chars++;
      if (char === "\n" || char === "\t") {
        const vk = char === "\n" ? 0x0d : 0x09;
        inputs.push(this.#key(vk, 0, 0), this.#key(vk, 0, W.KEYEVENTF_KEYUP));
        continue;
      }
      // KEYEVENTF_UNICODE types any UTF-16 unit, whatever the layout.
      for (let i = 0; i < char.length; i++) {
        const unit = char.charCodeAt(i);
        inputs.push(
          this.#key(0, unit, W.KEYEVENTF_UNICODE),
          this.#key(0, unit, W.KEYEVENTF_UNICODE | W.KEYEVENTF_KEYUP),
        );
      }
    }
    this.#send(inputs);
    return { chars, remapped: 0 };
  }

  #vk(name: string): number {
    const named = VK[name.toLowerCase()];
    if (named !== undefined) return named;
    const f = name.match(/^f([1-9]|1[0-9]|2[0-4])$/i);
    if (f) return 0x6f + Number(f[1]);
    if (name.length === 1) {
      const scan = this.#user32.symbols.VkKeyScanW(name.charCodeAt(0));
      if (scan !== -1) return scan & 0xff;
    }
    throw new Error(
      `Unknown key "${name}": use ctrl, shift, alt, super, enter, tab, escape, backspace, delete, ` +
        "arrows, home, end, pageup, pagedown, f1-f24 or a character of the keyboard layout",
    );
  }

  pressKeys(keys: readonly string[]): void {
    const codes = keys.map((key) => this.#vk(key));
    this.#send([
      ...codes.map((vk) => this.#key(vk, 0, 0)),
      ...codes.toReversed().map((vk) => this.#key(vk, 0, W.KEYEVENTF_KEYUP)),
    ]);
  }

  windows(includeHidden: boolean): port.WindowInfo[] {
    const u = this.#user32.symbols;
    const found: Deno.PointerValue[] = [];
    const callback = new Deno.UnsafeCallback(ENUM_WINDOWS_PROC, (hwnd) => {
      found.push(hwnd);
      return 1;
    });
    try {
      u.EnumWindows(callback.pointer, 0n);
    } finally {
      callback.close();
    }
    const focused = Deno.UnsafePointer.value(u.GetForegroundWindow());
    const windows: port.WindowInfo[] = [];
    for (const hwnd of found) {
      const titleBuffer = new Uint16Array(512);
      const length = u.GetWindowTextW(hwnd, titleBuffer, 512);
      const title = String.fromCharCode(...titleBuffer.subarray(0, length));
      const visible = u.IsWindowVisible(hwnd) !== 0 && u.IsIconic(hwnd) === 0;
      if (!includeHidden && (!visible || title === "")) continue;
      const rect = new Int32Array(4);
      u.GetWindowRect(hwnd, rect);
      const pid = new Uint32Array(1);
      u.GetWindowThreadProcessId(hwnd, pid);
      const classBuffer = new Uint16Array(256);
      const classLength = u.GetClassNameW(hwnd, classBuffer, 256);
      windows.push({
        id: hwndId(hwnd),
        title,
        app: String.fromCharCode(...classBuffer.subarray(0, classLength)),
        pid: pid[0] || null,
        x: rect[0],
        y: rect[1],
        width: rect[2] - rect[0],
        height: rect[3] - rect[1],
        visible,
        focused: Deno.UnsafePointer.value(hwnd) === focused,
      });
    }
    return windows;
  }

  async focusWindow(id: string): Promise<{ focused: boolean; via: string }> {
    if (!/^0x[0-9a-f]+$|^[0-9]+$/i.test(id)) {
      throw new Error(`window_id "${id}" is not a window handle (0x1a2b)`);
    }
    const hwnd = Deno.UnsafePointer.create(BigInt(id));
    const u = this.#user32.symbols;
    if (hwnd === null || u.IsWindow(hwnd) === 0) {
      throw new Error(`No window ${id} (closed?)`);
    }
    if (u.IsIconic(hwnd) !== 0) u.ShowWindow(hwnd, W.SW_RESTORE);
    // Windows lets a process take the foreground right after it sent input: tap Alt first.
    this.#send([this.#key(0x12, 0, 0), this.#key(0x12, 0, W.KEYEVENTF_KEYUP)]);
    u.SetForegroundWindow(hwnd);
    const deadline = Date.now() + 2000;
    while (Deno.UnsafePointer.value(u.GetForegroundWindow()) !== BigInt(id)) {
      if (Date.now() > deadline) {
        return { focused: false, via: "SetForegroundWindow" };
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { focused: true, via: "SetForegroundWindow" };
  }

  health() {
    const screen = this.screen();
    return {
      screen: { width: screen.width, height: screen.height },
      monitors: this.#user32.symbols.GetSystemMetrics(W.SM_CMONITORS),
      capture: "gdi-bitblt",
      input: "sendinput",
    };
  }

  close(): void {
    this.#gdi32.close();
    this.#user32.close();
  }
}
