// The Desktop port on Linux/BSD X11, through ffi/x11.ts: XTest input,
// MIT-SHM capture, XRandR monitors, EWMH windows.

import type {
  Desktop,
  Frame,
  Monitor,
  MouseButton,
  Point,
  Region,
  TypeReport,
  WindowInfo,
} from "./port.ts";
import { dragPath } from "./port.ts";
import type { JsonValue } from "../../../platform/store/mod.ts";
import { XDisplay } from "./x11_display.ts";
import { X11Capture } from "./x11_capture.ts";
import { X11Keyboard } from "./x11_keyboard.ts";
import { parseWindowId, X11Windows } from "./x11_windows.ts";

const BUTTONS: Record<MouseButton, number> = { left: 1, middle: 2, right: 3 };

export class X11Desktop implements Desktop {
  readonly platform = "x11";
  readonly display: XDisplay;
  readonly #capture: X11Capture;
  readonly #keyboard: X11Keyboard;
  readonly #windows: X11Windows;

  private constructor(display: XDisplay) {
    this.display = display;
    this.#capture = new X11Capture(display);
    this.#keyboard = new X11Keyboard(display);
    this.#windows = new X11Windows(display);
  }

  /** Opens the display; throws DesktopUnavailable naming what is missing and how to fix it. */
  static open(name: string | undefined): X11Desktop {
    const display = XDisplay.open(name);
    try {
      return new X11Desktop(display);
    } catch (error) {
      display.close();
      throw error;
    }
  }

  screen(): Region {
    return this.#capture.screen();
  }

  monitors(): Monitor[] {
    return this.#capture.monitors();
  }

  capture(region: Region): Frame {
    return this.#capture.capture(region);
  }

  pointer(): Point {
    const d = this.display;
    const windows = new BigUint64Array(2);
    const ints = new Int32Array(4);
    const mask = new Uint32Array(1);
    d.x11.symbols.XQueryPointer(
      d.pointer,
      d.root,
      windows.subarray(0, 1),
      windows.subarray(1, 2),
      ints.subarray(0, 1),
      ints.subarray(1, 2),
      ints.subarray(2, 3),
      ints.subarray(3, 4),
      mask,
    );
    return { x: ints[0], y: ints[1] };
  }

  moveMouse(point: Point): void {
    const d = this.display;
    d.xtst.symbols.XTestFakeMotionEvent(d.pointer, -1, point.x, point.y, 0n);
    d.sync();
  }

  click(point: Point, button: MouseButton): void {
    const d = this.display;
    d.xtst.symbols.XTestFakeMotionEvent(d.pointer, -1, point.x, point.y, 0n);
    d.xtst.symbols.XTestFakeButtonEvent(d.pointer, BUTTONS[button], 1, 0n);
    d.xtst.symbols.XTestFakeButtonEvent(d.pointer, BUTTONS[button], 0, 0n);
    d.sync();
  }

  async drag(from: Point, to: Point, button: MouseButton): Promise<void> {
    const d = this.display;
    const fake = d.xtst.symbols;
    fake.XTestFakeMotionEvent(d.pointer, -1, from.x, from.y, 0n);
    fake.XTestFakeButtonEvent(d.pointer, BUTTONS[button], 1, 0n);
    d.sync();
    await dragPath(from, to, ({ x, y }) => {
      fake.XTestFakeMotionEvent(
        d.pointer,
        -1,
        Math.round(x),
        Math.round(y),
        0n,
      );
      d.sync();
    });
    fake.XTestFakeButtonEvent(d.pointer, BUTTONS[button], 0, 0n);
    d.sync();
  }

  typeText(text: string): TypeReport {
    return this.#keyboard.typeText(text);
  }

  pressKeys(keys: readonly string[]): void {
    this.#keyboard.pressKeys(keys);
  }

  windows(includeHidden: boolean): WindowInfo[] {
    return this.#windows.list(includeHidden);
  }

  focusWindow(id: string): Promise<{ focused: boolean; via: string }> {
    const window = parseWindowId(id);
    if (window === undefined) {
      return Promise.reject(
        new Error(
          `window_id "${id}" is not an X window id (0x40000c or decimal, as get_window_list gives)`,
        ),
      );
    }
    return this.#windows.activate(window);
  }

  /** The window owning the CLIPBOARD selection (0n: none). */
  clipboardOwner(): bigint {
    const d = this.display;
    return d.x11.symbols.XGetSelectionOwner(d.pointer, d.atom("CLIPBOARD"));
  }

  unavailable(): string | undefined {
    if (!this.display.lost) return undefined;
    const name = this.display.name;
    return `The connection to X display "${name}" broke (the X server ended or the session ` +
      `logged out): start an X server on "${name}" again or log in again`;
  }

  ping(): void {
    // XSync is one round trip; on a dead server it trips the I/O error handler, which marks the display lost.
    if (!this.display.closed) this.display.sync();
  }

  health(): { [key: string]: JsonValue } {
    const lost = this.unavailable();
    if (lost) return { display: this.display.name, error: lost };
    const screen = this.screen();
    return {
      display: this.display.name,
      screen: { width: screen.width, height: screen.height },
      monitors: this.monitors().length,
      capture: this.#capture.method,
      ...(this.#capture.shmUnavailable
        ? { capture_note: this.#capture.shmUnavailable }
        : {}),
      input: "xtest",
      window_manager: this.#windows.ewmh ? "ewmh" : "none (WM_NAME fallback)",
      bound_keys: this.#keyboard.boundKeys,
      ...(this.display.survivesLoss ? {} : {
        display_loss_note:
          "libX11 older than 1.7 exits the whole process when the X server goes away; upgrade libX11 (libx11-6)",
      }),
    };
  }

  close(): void {
    if (this.display.closed) {
      this.display.close();
      return;
    }
    this.#keyboard.close();
    this.#capture.close();
    this.display.close();
  }
}
