// The Desktop port: what the tools need from a desktop, whatever the OS.
// One backend per OS (x11.ts, darwin.ts, win32.ts beside this file);
// all coordinates here are screen pixels, the tools translate image ones.

import type { JsonValue } from "../../../platform/store/mod.ts";
import { DISPLAY_NOT_SET } from "../config.ts";

export type Point = {
  x: number;
  y: number;
};

export type Region = {
  x: number;
  y: number;
  width: number;
  height: number;
};

export type Monitor = Region & {
  name: string;
  primary: boolean;
};

/** Captured pixels: 4 bytes per pixel in B, G, R, X order, `stride` bytes per row. */
export interface Frame {
  width: number;
  height: number;
  stride: number;
  /** Valid until the next capture (it may be shared memory). */
  data: Uint8Array;
}

export type WindowInfo = {
  /** Hex X window id (`0x40000c`), HWND or CGWindowID as a string. */
  id: string;
  title: string;
  app: string;
  pid: number | null;
  x: number;
  y: number;
  width: number;
  height: number;
  visible: boolean;
  focused: boolean;
};

export type MouseButton = "left" | "right" | "middle";

export interface TypeReport {
  chars: number;
  /** Characters typed through a temporarily remapped key (absent from the keymap). */
  remapped: number;
}

export interface Desktop {
  /** `x11`, `darwin` or `win32`. */
  readonly platform: string;
  screen(): Region;
  monitors(): Monitor[];
  capture(region: Region): Frame;
  pointer(): Point;
  moveMouse(point: Point): void;
  click(point: Point, button: MouseButton): void;
  drag(from: Point, to: Point, button: MouseButton): Promise<void>;
  typeText(text: string): TypeReport;
  /** Presses the keys in order, holds them, releases them in reverse: a chord. */
  pressKeys(keys: readonly string[]): void;
  windows(includeHidden: boolean): WindowInfo[];
  /** Raises and focuses the window; resolves once the desktop reports it focused (or says not). */
  focusWindow(id: string): Promise<{ focused: boolean; via: string }>;
  /** Why the desktop cannot be used any more (its display went away), if so. */
  unavailable?(): string | undefined;
  /** A cheap round trip that reveals a connection gone (unavailable() then says so). */
  ping?(): void;
  /** Backend facts for /health (capture method, extensions, keymap). */
  health(): { [key: string]: JsonValue };
  close(): void;
}

/**
 * The pointer's path of a drag while the button is held: ten steps from
 * `from` to `to`, 5 ms apart (apps start a drag only after the pointer moves
 * while held). `move` gets each point, fractional; the backend rounds it if
 * its API takes whole pixels.
 */
export async function dragPath(
  from: Point,
  to: Point,
  move: (point: Point) => void,
): Promise<void> {
  const steps = 10;
  for (let i = 1; i <= steps; i++) {
    move({
      x: from.x + ((to.x - from.x) * i) / steps,
      y: from.y + ((to.y - from.y) * i) / steps,
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A desktop that cannot be used as is: missing display, permission or library; says how to fix. */
export class DesktopUnavailable extends Error {
  override name = "DesktopUnavailable";
  constructor(message: string, readonly permission: string) {
    super(message);
  }
}

/** No X display named (no DISPLAY, no config key `display`): nothing to control. */
export function displayNotSet(): DesktopUnavailable {
  return new DesktopUnavailable(DISPLAY_NOT_SET, "display");
}

/** The clipboard of the desktop session, as text. */
export interface Clipboard {
  /** How it is reached (`xclip`, `xsel`, `pbcopy`, `powershell`), or why not. */
  readonly via: string;
  readonly available: boolean;
  read(): Promise<string>;
  write(text: string): Promise<void>;
  close(): Promise<void>;
}
