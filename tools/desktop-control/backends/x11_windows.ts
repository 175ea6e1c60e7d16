// Top-level windows on X11: EWMH (_NET_CLIENT_LIST, _NET_ACTIVE_WINDOW) when
// a window manager provides it, else the root's children with WM_NAME;
// activation through the window manager, else raise + XSetInputFocus.

import {
  X,
  XClientMessageLayout,
  XWindowAttributesLayout,
} from "../../../ffi/x11.ts";
import type { WindowInfo } from "./port.ts";
import type { XDisplay } from "./x11_display.ts";

interface Attributes {
  border: number;
  width: number;
  height: number;
  viewable: boolean;
  overrideRedirect: boolean;
}

export function formatWindowId(id: bigint): string {
  return `0x${id.toString(16)}`;
}

/** `0x40000c` or `4194316` → the window id; undefined when neither. */
export function parseWindowId(text: string): bigint | undefined {
  const trimmed = text.trim();
  if (/^0x[0-9a-f]{1,16}$/i.test(trimmed)) return BigInt(trimmed);
  if (/^[0-9]{1,20}$/.test(trimmed)) return BigInt(trimmed);
  return undefined;
}

export class X11Windows {
  readonly #display: XDisplay;

  constructor(display: XDisplay) {
    this.#display = display;
  }

  /** Whether a running window manager speaks EWMH. */
  get ewmh(): boolean {
    const d = this.#display;
    return d.longs(d.root, "_NET_SUPPORTING_WM_CHECK").length > 0 &&
      d.longs(d.root, "_NET_CLIENT_LIST").length > 0;
  }

  list(includeHidden: boolean): WindowInfo[] {
    const d = this.#display;
    const focused = this.focused();
    const ids = this.ewmh
      ? d.longs(d.root, "_NET_CLIENT_LIST")
      : this.#topLevelClients();
    const windows: WindowInfo[] = [];
    for (const id of ids) {
      const attributes = this.#attributes(id);
      if (!attributes) continue; // gone meanwhile
      const title = this.title(id);
      const visible = attributes.viewable;
      if (
        !includeHidden &&
        (!visible || attributes.overrideRedirect || title === "")
      ) continue;
      // The outer corner (border included), as xwininfo and xdotool report it.
      const origin = this.#origin(id);
      origin.x -= attributes.border;
      origin.y -= attributes.border;
      windows.push({
        id: formatWindowId(id),
        title,
        app: this.#className(id),
        pid: d.longs(id, "_NET_WM_PID").map(Number)[0] ?? null,
        x: origin.x,
        y: origin.y,
        width: attributes.width,
        height: attributes.height,
        visible,
        focused: id === focused,
      });
    }
    return windows;
  }

  /** The focused top-level window (the WM's active window, else the input focus's top level). */
  focused(): bigint {
    const d = this.#display;
    if (this.ewmh) {
      const active = d.longs(d.root, "_NET_ACTIVE_WINDOW")[0];
      if (active !== undefined && active !== 0n) return active;
    }
    const window = new BigUint64Array(1);
    const revert = new Int32Array(1);
    d.x11.symbols.XGetInputFocus(d.pointer, window, revert);
    return this.#topLevel(window[0]);
  }

  title(id: bigint): string {
    const d = this.#display;
    const utf8 = d.property(id, "_NET_WM_NAME", d.atom("UTF8_STRING"));
    if (utf8 && utf8.items > 0) return new TextDecoder().decode(utf8.bytes);
    const name = new BigUint64Array(1);
    if (d.x11.symbols.XFetchName(d.pointer, id, name) === 0) return "";
    const pointer = Deno.UnsafePointer.create(name[0]);
    if (pointer === null) return "";
    const text = new Deno.UnsafePointerView(pointer).getCString();
    d.x11.symbols.XFree(pointer);
    return text;
  }

  async activate(id: bigint): Promise<{ focused: boolean; via: string }> {
    const d = this.#display;
    if (!this.#attributes(id)) {
      throw new Error(`No window ${formatWindowId(id)} (closed?)`);
    }
    let via: string;
    if (this.ewmh) {
      this.#sendActivate(id);
      via = "_NET_ACTIVE_WINDOW";
    } else {
      d.trap("XMapRaised", () => d.x11.symbols.XMapRaised(d.pointer, id));
      await this.#until(() => this.#attributes(id)?.viewable === true, 1000);
      d.trap(
        "XSetInputFocus",
        () =>
          d.x11.symbols.XSetInputFocus(
            d.pointer,
            id,
            X.RevertToParent,
            X.CurrentTime,
          ),
      );
      via = "XSetInputFocus";
    }
    const focused = await this.#until(() => this.focused() === id, 2000);
    return { focused, via };
  }

  #sendActivate(id: bigint): void {
    const d = this.#display;
    const event = new Uint8Array(XClientMessageLayout.size);
    const view = new DataView(event.buffer);
    view.setInt32(XClientMessageLayout.type, X.ClientMessage, true);
    view.setInt32(XClientMessageLayout.sendEvent, 1, true);
    view.setBigUint64(XClientMessageLayout.window, id, true);
    view.setBigUint64(
      XClientMessageLayout.messageType,
      d.atom("_NET_ACTIVE_WINDOW"),
      true,
    );
    view.setInt32(XClientMessageLayout.format, 32, true);
    // data.l[0] = 2: the request comes from a pager/tool, which WMs honour.
    view.setBigInt64(XClientMessageLayout.data, 2n, true);
    const mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask;
    d.trap(
      "XSendEvent",
      () => d.x11.symbols.XSendEvent(d.pointer, d.root, 0, mask, event),
    );
  }

  async #until(check: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  #children(window: bigint): { parent: bigint; children: bigint[] } {
    const d = this.#display;
    const root = new BigUint64Array(1);
    const parent = new BigUint64Array(1);
    const list = new BigUint64Array(1);
    const count = new Uint32Array(1);
    const ok = d.x11.symbols.XQueryTree(
      d.pointer,
      window,
      root,
      parent,
      list,
      count,
    );
    const pointer = Deno.UnsafePointer.create(list[0]);
    if (ok === 0 || pointer === null) {
      return { parent: parent[0], children: [] };
    }
    const children = [
      ...new BigUint64Array(
        Deno.UnsafePointerView.getArrayBuffer(pointer, count[0] * 8).slice(0),
      ),
    ];
    d.x11.symbols.XFree(pointer);
    return { parent: parent[0], children };
  }

  /** Without a WM: each root child, or the client inside a frame (the one with WM_STATE). */
  #topLevelClients(): bigint[] {
    const d = this.#display;
    return this.#children(d.root).children.map((child) =>
      d.property(child, "WM_STATE") ? child : this.#clientIn(child, 2) ?? child
    );
  }

  #clientIn(window: bigint, depth: number): bigint | undefined {
    for (const child of this.#children(window).children) {
      if (this.#display.property(child, "WM_STATE")) return child;
      if (depth > 1) {
        const found = this.#clientIn(child, depth - 1);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  }

  /** The root's child that contains `window` (or the client inside it). */
  #topLevel(window: bigint): bigint {
    const d = this.#display;
    if (window <= 1n) return 0n; // None or PointerRoot
    let current = window;
    for (let i = 0; i < 64; i++) {
      const { parent } = this.#children(current);
      if (parent === d.root || parent === 0n) break;
      current = parent;
    }
    if (d.property(current, "WM_STATE")) return current;
    return this.#clientIn(current, 2) ?? current;
  }

  #attributes(id: bigint): Attributes | undefined {
    const d = this.#display;
    const bytes = new Uint8Array(XWindowAttributesLayout.size);
    let ok = 0;
    try {
      ok = d.trap(
        "XGetWindowAttributes",
        () => d.x11.symbols.XGetWindowAttributes(d.pointer, id, bytes),
      );
    } catch {
      return undefined;
    }
    if (ok === 0) return undefined;
    const view = new DataView(bytes.buffer);
    return {
      border: view.getInt32(XWindowAttributesLayout.borderWidth, true),
      width: view.getInt32(XWindowAttributesLayout.width, true),
      height: view.getInt32(XWindowAttributesLayout.height, true),
      viewable:
        view.getInt32(XWindowAttributesLayout.mapState, true) === X.IsViewable,
      overrideRedirect:
        view.getInt32(XWindowAttributesLayout.overrideRedirect, true) !== 0,
    };
  }

  #origin(id: bigint): { x: number; y: number } {
    const d = this.#display;
    const x = new Int32Array(1);
    const y = new Int32Array(1);
    const child = new BigUint64Array(1);
    d.x11.symbols.XTranslateCoordinates(
      d.pointer,
      id,
      d.root,
      0,
      0,
      x,
      y,
      child,
    );
    return { x: x[0], y: y[0] };
  }

  #className(id: bigint): string {
    const property = this.#display.property(id, "WM_CLASS");
    if (!property) return "";
    // "instance\0Class\0": the class is the application's name.
    const parts = new TextDecoder().decode(property.bytes).split("\0");
    return parts[1] || parts[0] || "";
  }
}
