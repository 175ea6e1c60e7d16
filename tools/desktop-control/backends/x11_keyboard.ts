// Keyboard input through XTest, independent of the layout: characters are
// looked up as keysyms in the live keymap; one the keymap lacks is bound to
// a spare keycode for as long as the server runs (xdotool's trick, without
// its revert race), and every binding is undone at close.

import { cString, X } from "../../../ffi/x11.ts";
import type { TypeReport } from "./port.ts";
import type { XDisplay } from "./x11_display.ts";

const SHIFT_L = 0xffe1n;
const RETURN = 0xff0dn;
const TAB = 0xff09n;

/** Friendly key names (any case) → X keysym names. */
const KEY_NAMES: Record<string, string> = {
  ctrl: "Control_L",
  control: "Control_L",
  shift: "Shift_L",
  alt: "Alt_L",
  option: "Alt_L",
  altgr: "ISO_Level3_Shift",
  super: "Super_L",
  win: "Super_L",
  windows: "Super_L",
  cmd: "Super_L",
  command: "Super_L",
  meta: "Super_L",
  enter: "Return",
  return: "Return",
  esc: "Escape",
  escape: "Escape",
  tab: "Tab",
  backspace: "BackSpace",
  delete: "Delete",
  del: "Delete",
  insert: "Insert",
  space: "space",
  up: "Up",
  down: "Down",
  left: "Left",
  right: "Right",
  home: "Home",
  end: "End",
  pageup: "Prior",
  page_up: "Prior",
  pagedown: "Next",
  page_down: "Next",
  menu: "Menu",
  capslock: "Caps_Lock",
  print: "Print",
  printscreen: "Print",
  pause: "Pause",
  plus: "plus",
  minus: "minus",
};

/** The keysym of one character (X's Unicode keysyms above Latin-1). */
export function keysymOfChar(char: string): bigint {
  if (char === "\n") return RETURN;
  if (char === "\t") return TAB;
  const code = char.codePointAt(0) ?? 0;
  if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff)) {
    return BigInt(code);
  }
  return 0x0100_0000n + BigInt(code);
}

interface KeyBinding {
  code: number;
  shift: boolean;
}

export class X11Keyboard {
  readonly #display: XDisplay;
  #min = 8;
  #per = 0;
  #syms = new BigUint64Array(0);
  /** Keycodes we bound, oldest first; reverted at close. */
  readonly #bound = new Map<number, bigint>();

  constructor(display: XDisplay) {
    this.#display = display;
    this.#load();
  }

  get boundKeys(): number {
    return this.#bound.size;
  }

  /** Reads the live keymap (another client may have changed the layout). */
  #load(): void {
    const d = this.#display;
    const range = new Int32Array(2);
    d.x11.symbols.XDisplayKeycodes(
      d.pointer,
      range.subarray(0, 1),
      range.subarray(1, 2),
    );
    const [min, max] = range;
    const per = new Int32Array(1);
    const count = max - min + 1;
    const pointer = d.x11.symbols.XGetKeyboardMapping(
      d.pointer,
      min,
      count,
      per,
    );
    if (pointer === null) throw new Error("XGetKeyboardMapping failed");
    this.#syms = new BigUint64Array(
      Deno.UnsafePointerView.getArrayBuffer(pointer, count * per[0] * 8)
        .slice(0),
    );
    d.x11.symbols.XFree(pointer);
    this.#min = min;
    this.#per = per[0];
  }

  /** A keycode producing `keysym` at level 0 or 1 (shift), binding a spare one if needed. */
  #binding(keysym: bigint): KeyBinding & { bound: boolean } {
    const per = this.#per;
    const codes = this.#syms.length / per;
    for (const level of [0, 1]) {
      if (level >= per) break;
      for (let i = 0; i < codes; i++) {
        if (this.#syms[i * per + level] === keysym) {
          return { code: i + this.#min, shift: level === 1, bound: false };
        }
      }
    }
    return { code: this.#bind(keysym), shift: false, bound: true };
  }

  #bind(keysym: bigint): number {
    const per = this.#per;
    const codes = this.#syms.length / per;
    let code = -1;
    for (let i = 0; i < codes && code < 0; i++) {
      const row = this.#syms.subarray(i * per, (i + 1) * per);
      if (row.every((sym) => sym === X.NoSymbol)) code = i + this.#min;
    }
    if (code < 0) {
      // No spare keycode left: reuse the binding made longest ago.
      const oldest = this.#bound.keys().next();
      if (oldest.done) {
        throw new Error(
          "No spare keycode to bind a character the keymap lacks",
        );
      }
      code = oldest.value;
    }
    const row = new BigUint64Array(per);
    row[0] = keysym;
    if (per > 1) row[1] = keysym;
    const d = this.#display;
    d.trap(
      "XChangeKeyboardMapping",
      () => d.x11.symbols.XChangeKeyboardMapping(d.pointer, code, per, row, 1),
    );
    this.#bound.delete(code);
    this.#bound.set(code, keysym);
    this.#syms.set(row, (code - this.#min) * per);
    return code;
  }

  #key(code: number, down: boolean): void {
    const d = this.#display;
    d.xtst.symbols.XTestFakeKeyEvent(d.pointer, code, down ? 1 : 0, 0n);
  }

  #shiftCode(): number {
    return this.#binding(SHIFT_L).code;
  }

  typeText(text: string): TypeReport {
    this.#load();
    let chars = 0;
    let remapped = 0;
    const shift = this.#shiftCode();
    const normalized = text.replaceAll("\r\n", "\n");
    for (const char of normalized) {
      const code = char.codePointAt(0) ?? 0;
      if ((code < 0x20 && char !== "\n" && char !== "\t") || code === 0x7f) {
        throw new Error(
          `text has a control character U+${
            code.toString(16).padStart(4, "0")
          } at character ${chars}; use keyboard_press for keys`,
        );
      }
    }
    for (const char of normalized) {
      const binding = this.#binding(keysymOfChar(char));
      if (binding.bound) remapped++;
      if (binding.shift) this.#key(shift, true);
      this.#key(binding.code, true);
      this.#key(binding.code, false);
      if (binding.shift) this.#key(shift, false);
      chars++;
    }
    this.#display.sync();
    return { chars, remapped };
  }

  /** The keysym of a key name: a friendly name, F1-F35, one character, or an X keysym name. */
  keysymOf(name: string): bigint {
    const friendly = KEY_NAMES[name.toLowerCase()];
    if (friendly) return this.#lookup(friendly, name);
    if (/^f([1-9]|[12][0-9]|3[0-5])$/i.test(name)) {
      return this.#lookup(name.toUpperCase(), name);
    }
    if ([...name].length === 1) return keysymOfChar(name);
    return this.#lookup(name, name);
  }

  #lookup(xName: string, asked: string): bigint {
    const keysym = this.#display.x11.symbols.XStringToKeysym(cString(xName));
    if (keysym === X.NoSymbol) {
      throw new Error(
        `Unknown key "${asked}": use a name like ctrl, shift, alt, super, enter, tab, escape, ` +
          "backspace, delete, up, pageup, home, f5, a single character, or an X keysym name " +
          "(XF86AudioMute)",
      );
    }
    return keysym;
  }

  /** Presses the keys in order and releases them in reverse (a chord). */
  pressKeys(names: readonly string[]): void {
    this.#load();
    const keysyms = names.map((name) => this.keysymOf(name));
    const shift = this.#shiftCode();
    const down: number[] = [];
    try {
      for (const keysym of keysyms) {
        const binding = this.#binding(keysym);
        if (binding.shift && !down.includes(shift)) {
          this.#key(shift, true);
          down.push(shift);
        }
        this.#key(binding.code, true);
        down.push(binding.code);
      }
    } finally {
      for (const code of down.toReversed()) this.#key(code, false);
      this.#display.sync();
    }
  }

  /** Undoes every binding this keyboard made. */
  close(): void {
    const d = this.#display;
    if (d.closed) return;
    const empty = new BigUint64Array(Math.max(this.#per, 1));
    for (const code of this.#bound.keys()) {
      d.x11.symbols.XChangeKeyboardMapping(
        d.pointer,
        code,
        this.#per,
        empty,
        1,
      );
    }
    this.#bound.clear();
    d.sync();
  }
}
